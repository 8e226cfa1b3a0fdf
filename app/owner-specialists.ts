/**
 * The owner's view of running specialists and their stop (`aivyx specialists [stop ID]`, the REST
 * channel's /v1/specialists routes): the seed's `agent.terminate` as the owner's, not the model's
 * (the lead's model cannot act while its step's children run). Stopping one needs
 * `agent.terminate:<specialist>` from the agent's capabilities under the caller's tier ceiling
 * (Trusted only), refuses every id that is not a running specialist child of a lead turn, is
 * audited (`SpecialistStopped`) before the cancel, and cancels exactly that child workflow: its lead
 * is told the owner stopped it and goes on with its other specialists (workflows/turn-delegate.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { AuditPort } from '../activities/ports.js';
import { CapabilitySet, tierCeiling, type TrustTier } from '../core/capability/index.js';
import type { TierPolicy } from '../core/capability/tier-policy.js';
import { AivyxError } from '../core/errors.js';
import { parseDelegateChildId } from '../core/specialists.js';
import { isWorkflowNotFound } from '../infra/temporal/client-errors.js';

/** One running specialist as the owner sees it. */
export interface RunningSpecialist {
  /** The child turn's workflow id (what `stop` takes). */
  childTurnId: string;
  specialist: string;
  leadTurnId: string;
  /** What it is doing: its own summary in the Temporal UI (first line), or `running`. */
  state: string;
  startTime: string;
}

/** Who asks to stop one, as their channel authenticated them. */
export interface SpecialistStopper {
  identity: string;
  channel: string;
  trustTier: TrustTier;
}

/** The owner's port onto running specialists. */
export interface OwnerSpecialists {
  list(limit?: number): Promise<RunningSpecialist[]>;
  /** Cancels exactly the running specialist `childTurnId` (audited); refuses anything else. */
  stop(childTurnId: string, by?: SpecialistStopper): Promise<{ stopped: string; specialist: string; leadTurnId: string }>;
}

/** The owner at a local channel (the CLI goes through REST). */
const LOCAL: SpecialistStopper = { identity: 'local-user', channel: 'rest', trustTier: 'Trusted' };

/** What the owner's specialists port needs. */
export interface OwnerSpecialistsDeps {
  client: Client;
  taskQueue: string;
  audit: AuditPort;
  capabilities: readonly string[];
  tierPolicy?: TierPolicy;
}

/** The owner's specialists over the Temporal client: listed from visibility, stopped by a cancel of the one child. */
export function createOwnerSpecialists(deps: OwnerSpecialistsDeps): OwnerSpecialists {
  const notRunning = (id: string, why: string) =>
    new AivyxError('NotFound', `"${id}" is not a running specialist: ${why}`, {
      hint: 'see `aivyx specialists` for the running ones (ids look like <lead turn>/tool-<step>-<i>/<specialist>)',
      detail: { kind: 'specialist', id },
    });
  return {
    async list(limit = 100) {
      const query = `WorkflowType = 'turnWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${deps.taskQueue}'`;
      const out: RunningSpecialist[] = [];
      for await (const wf of deps.client.workflow.list({ query, pageSize: 100 })) {
        const parts = parseDelegateChildId(wf.workflowId);
        if (!parts || wf.parentExecution?.workflowId !== parts.leadTurnId) continue;
        out.push({
          childTurnId: wf.workflowId,
          ...parts,
          state: await stateOf(deps.client, wf.workflowId),
          startTime: wf.startTime.toISOString(),
        });
        if (out.length >= limit) break;
      }
      return out;
    },
    async stop(childTurnId, by = LOCAL) {
      const parts = parseDelegateChildId(childTurnId);
      if (!parts) throw notRunning(childTurnId, "it is not a specialist's turn id");
      const scope = `agent.terminate:${parts.specialist}`;
      const held = CapabilitySet.from([...deps.capabilities]).intersect(tierCeiling(by.trustTier, deps.tierPolicy));
      if (!held.grants(scope)) {
        // Who tried to stop whom is kept: a refused stop is a scope denied on that child's turn.
        await deps.audit.append(`owner/specialists/refused/${childTurnId}/${randomUUID()}`, {
          type: 'ScopeDenied',
          turnId: childTurnId,
          callId: `stop by ${by.identity} on ${by.channel}`,
          toolAttempted: 'agent.terminate',
          scopeRequested: 'agent.terminate',
          scopeQualifier: parts.specialist,
          heldCapabilities: held.toJSON(),
        });
        throw new AivyxError(
          'CapabilityDenied',
          `stopping specialist ${parts.specialist} needs ${scope}, which ${by.identity} on ${by.channel} (${by.trustTier}) does not hold`,
          {
            detail: { scope, trustTier: by.trustTier },
            hint: 'agent.terminate is Trusted only (the CLI, REST with the owner token); add it to AIVYX_CAPABILITIES if it was removed',
          },
        );
      }
      const handle = deps.client.workflow.getHandle(childTurnId);
      const described = await handle.describe().catch((err: unknown) => {
        if (isWorkflowNotFound(err)) throw notRunning(childTurnId, 'no such workflow');
        throw err;
      });
      if (described.type !== 'turnWorkflow' || described.parentExecution?.workflowId !== parts.leadTurnId)
        throw notRunning(childTurnId, `it is not a child turn of ${parts.leadTurnId}`);
      if (described.status.name !== 'RUNNING') throw notRunning(childTurnId, `it has ended (${described.status.name})`);
      await deps.audit.append(`owner/specialists/stop/${childTurnId}/${randomUUID()}`, {
        type: 'SpecialistStopped',
        turnId: childTurnId,
        parentTurnId: parts.leadTurnId,
        specialist: parts.specialist,
        by: by.identity,
        channel: by.channel,
        trustTier: by.trustTier,
      });
      // This run only: a later run under the same id (none is started for a child) is not touched.
      await deps.client.workflow.getHandle(childTurnId, described.runId).cancel();
      return { stopped: childTurnId, specialist: parts.specialist, leadTurnId: parts.leadTurnId };
    },
  };
}

/** The first line of a running child's UI summary (what it is doing), or `running` when it does not answer. */
async function stateOf(client: Client, workflowId: string): Promise<string> {
  const meta = (await client.workflow
    .getHandle(workflowId)
    .query('__temporal_workflow_metadata')
    .catch(() => undefined)) as { currentDetails?: string } | undefined;
  const first = meta?.currentDetails?.split('\n')[0]?.replace(/\*\*/g, '').trim();
  return first || 'running';
}
