/**
 * The stack's first phase after the checks: the database (PGlite in the data directory, or PostgreSQL
 * at DATABASE_URL), the keyring the passphrase unlocks, the install's identity and task queue, the
 * sealed storage, the audit service and the payload codecs every client and worker of ours uses.
 */
import { join } from 'node:path';
import { AivyxError } from '../core/errors.js';
import { createAuditService, witnessPath } from '../infra/audit/index.js';
import { aivyxDataConverter, createPayloadCodec } from '../infra/codec/index.js';
import { openDatabase } from '../infra/db/index.js';
import { describeCause, type Health } from '../infra/health.js';
import { SealedStorage, unlockStorageKeyring } from '../infra/storage/index.js';
import { reconciledAuditService } from '../infra/tool-call-log.js';
import { installTaskQueue, type StackStart } from './stack-types.js';

/** What the store phase opened: the database, the keys and what is built on them. */
export type StackStore = Awaited<ReturnType<typeof openStore>>;

/** Opens the database, unlocks the keyring and builds the audit service and payload codecs on them. */
export async function openStore({ config, opts, log, cleanups }: StackStart, health: Health) {
  const dbLabel = config.databaseUrl ? postgresLabel(config.databaseUrl) : `PGlite in ${join(config.home, 'pglite')}`;
  health.register('database', {
    label: `the database (${dbLabel})`,
    kind: 'Storage',
    hint: config.databaseUrl
      ? 'start PostgreSQL or fix DATABASE_URL; aivyx reconnects by itself once it answers'
      : 'PGlite runs inside aivyx: restart aivyx up',
  });
  const db = await openDatabase(
    config.databaseUrl ? { databaseUrl: config.databaseUrl } : { pgliteDir: join(config.home, 'pglite') },
  ).catch((err: unknown) => {
    const code = unreachableCode(err);
    if (!code) throw err;
    throw new AivyxError('Storage', `cannot reach the database (${dbLabel}, from DATABASE_URL): ${describeCause(err) || code}`, {
      hint: 'start PostgreSQL or fix DATABASE_URL (unset it to use the embedded PGlite)',
      detail: { dependency: 'database', unavailable: true },
      cause: err,
    });
  });
  cleanups.push(() => db.close());
  log(`database: ${db.kind === 'postgres' ? `${dbLabel} (DATABASE_URL)` : dbLabel}`);
  const keys = await unlockStorageKeyring(db.db, opts.passphrase, opts.confirmPassphrase ? { confirmNew: opts.confirmPassphrase } : {});
  const master = keys.master;
  const installId = master.installId();
  const taskQueue = config.taskQueue ?? installTaskQueue(installId);
  log(`install ${installId}: task queue ${taskQueue}${config.hostQueue ? `, host queue ${config.hostQueue}` : ''}`);
  const storage = SealedStorage.open(db.db, keys);
  // Signed checkpoints of the audit log go to the witness file outside the database (docs/AUDIT.md);
  // `audit verify` also reconciles tool calls and intents with the log.
  const auditKey = master.subkey('audit');
  const audit = reconciledAuditService(
    createAuditService({ db: db.db, auditKey, checkpointSeed: master.subkey('audit_checkpoint'), witnessPath: witnessPath(config.home) }),
    db.db,
    auditKey,
  );
  // Every client and worker of ours encrypts payloads: histories on the server hold no plaintext. The
  // worker refuses what is not encrypted for the workflow it arrives at; clients throw on it; the
  // codec server only displays.
  const codec = createPayloadCodec(master.subkey('payload'), { unencrypted: 'pass' });
  const dataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload')));
  const workerDataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload'), { unencrypted: 'refuse' }));
  return { db, master, installId, taskQueue, storage, audit, codec, dataConverter, workerDataConverter };
}

/** PostgreSQL's place without its password (for messages and /v1/health). */
function postgresLabel(url: string): string {
  const u = new URL(url);
  return `PostgreSQL at ${u.hostname}:${u.port || 5432}${u.pathname}`;
}

// Network failures that mean "the database is not there", as opposed to a bad schema or passphrase.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN', '57P03']);

function unreachableCode(err: unknown): string | undefined {
  for (
    let e = err as { code?: unknown; cause?: unknown; errors?: unknown[] } | undefined, depth = 0;
    e && depth < 8;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && UNREACHABLE_CODES.has(e.code)) return e.code;
    const inner = e.errors?.find((x) => UNREACHABLE_CODES.has(String((x as { code?: unknown }).code)));
    if (inner) return String((inner as { code?: unknown }).code);
  }
  return undefined;
}
