/**
 * Which aivyx install a Temporal namespace belongs to. A namespace holds one install's work: its
 * workflow ids (sessions, turns named after platform message ids, missions) carry no install, so a
 * second install in it would collide with the first's ids and read histories it cannot decrypt. The
 * first install to attach records its public identity (MasterKey.installId) in the namespace's data;
 * every worker and gateway compares it at start and refuses another install's namespace. Anyone who
 * can update the namespace can rewrite this: it keeps honest installs apart; Temporal's own
 * authorization keeps dishonest clients out (docs/DEPLOY.md, "Two installs on one cluster").
 */
import { isGrpcServiceError, type Connection } from '@temporalio/client';
import { AivyxError } from '../../core/errors.js';

/** The namespace data key (an identifier, as `temporal operator namespace update --data` requires). */
export const INSTALL_MARKER_KEY = 'aivyx_install';

/** Where the namespace is, for the refusal. */
export interface NamespacePlace {
  address: string;
  namespace: string;
  /** Our own dev server's data file (no TEMPORAL_ADDRESS): another owner means the database was replaced. */
  devServerData?: string;
}

const NOT_FOUND = 5;
const PERMISSION_DENIED = 7;

/** The recorded owner: our writes are bare, the CLI's are JSON strings; empty means released. */
function ownerOf(raw: string | undefined): string | undefined {
  const value = raw?.trim().replace(/^"(.*)"$/, '$1');
  return value ? value : undefined;
}

/** The install that owns `namespace`, or undefined when none has claimed it. */
export async function namespaceOwner(connection: Connection, namespace: string): Promise<string | undefined> {
  const described = await connection.workflowService.describeNamespace({ namespace }).catch((err: unknown) => {
    if (!isGrpcServiceError(err) || err.code !== NOT_FOUND) throw err;
    throw new AivyxError('Config', `there is no namespace "${namespace}" on this Temporal (TEMPORAL_NAMESPACE)`, {
      hint: `create it (\`temporal operator namespace create --namespace ${namespace}\`) or set TEMPORAL_NAMESPACE to an existing one (docs/DEPLOY.md)`,
      cause: err,
    });
  });
  return ownerOf(described.namespaceInfo?.data?.[INSTALL_MARKER_KEY] ?? undefined);
}

function refusal(place: NamespacePlace, owner: string, installId: string): AivyxError {
  const ids = `install ${owner}; this one is ${installId}`;
  if (place.devServerData)
    return new AivyxError('Config', `the Temporal data in ${place.devServerData} belongs to another aivyx install (${ids})`, {
      hint: `this data directory's database was replaced; move ${place.devServerData} away to start this install's Temporal afresh (the other install's workflows stay in the moved file), or restore that install's database`,
      detail: { owner, installId },
    });
  return new AivyxError(
    'Config',
    `namespace "${place.namespace}" on ${place.address} holds another aivyx install's work (${ids}): this process does not attach to it`,
    {
      hint: `give this install a namespace of its own: \`temporal operator namespace create --namespace NAME\`, then set TEMPORAL_NAMESPACE=NAME (docs/DEPLOY.md, "Two installs on one cluster"); if that install is gone for good, release the namespace with \`temporal operator namespace update --namespace ${place.namespace} --data ${INSTALL_MARKER_KEY}='""'\``,
      detail: { owner, installId },
    },
  );
}

/**
 * Claims `place.namespace` for `installId` when unclaimed; refuses (Config) when another install holds
 * it. Returns whether this call recorded the claim.
 */
export async function claimNamespace(connection: Connection, place: NamespacePlace, installId: string): Promise<boolean> {
  const { namespace } = place;
  const owner = await namespaceOwner(connection, namespace);
  if (owner === installId) return false;
  if (owner !== undefined) throw refusal(place, owner, installId);
  try {
    // Namespace data is merged on update: other keys stay.
    await connection.workflowService.updateNamespace({ namespace, updateInfo: { data: { [INSTALL_MARKER_KEY]: installId } } });
  } catch (err) {
    if (!isGrpcServiceError(err) || err.code !== PERMISSION_DENIED) {
      // Another process of this install may have claimed it at the same moment: then all is well.
      if ((await namespaceOwner(connection, namespace)) === installId) return false;
      throw err;
    }
    throw new AivyxError(
      'Config',
      `namespace "${namespace}" on ${place.address} is not yet claimed by this install, and this process may not update it`,
      {
        hint: `have an operator run \`temporal operator namespace update --namespace ${namespace} --data ${INSTALL_MARKER_KEY}='"${installId}"'\` (docs/DEPLOY.md)`,
        cause: err,
      },
    );
  }
  // Two installs claiming one fresh namespace at once: the last write stands, and the other sees it here.
  const now = await namespaceOwner(connection, namespace);
  if (now !== installId) throw refusal(place, now ?? '(none)', installId);
  return true;
}
