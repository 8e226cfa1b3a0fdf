/**
 * What the mission's activity concerns share, built once from the worker's deps: the audit append
 * with its keys, and the checks every later step makes against what the worker itself recorded —
 * the verified definition this run holds, a gate's decision on exactly one call, and the branch
 * each earlier wait ended on.
 */
import type { AuditEvent } from '../../core/audit-events.js';
import { inputHash } from '../../core/canonical-json.js';
import type { OneShotGrant } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { StepGrant } from '../../machines/index.js';
import { missionWaitKey, type MissionDefinition } from '../../workflows/mission-messages.js';
import { bookkeepingKey, currentExecution } from '../execution.js';
import { toApplicationFailure } from '../failure.js';
import type { DecisionAuthority, GateAuthority, MissionActivityDeps, MissionAuthority, WaitOutcome } from './types.js';

/** The mission audit events (the mission kinds of `AuditEvent`). */
export type MissionAuditEvent = Extract<AuditEvent, { missionId: string }>;

const ENTRY_IDENTITY = ['gateId', 'step', 'attempt', 'stepTurnId'] as const;
/** The entries local activities may write: the ones `missionEntryKey` names uniquely within a run. */
export const LOCAL_ENTRIES: ReadonlySet<MissionAuditEvent['type']> = new Set([
  'MissionStarted',
  'MissionRejected',
  'MissionStepFinished',
  'GateOpened',
]);

/**
 * What names one mission entry within its run, for a local activity's key: its type and the gate,
 * step, attempt or step turn it is about — never a time or a count a retried workflow task
 * could see differently. It is unique only for what runs locally (`LOCAL_ENTRIES`): a run starts
 * once, opens a gate once, and finishes a step attempt once; a remote activity keys by activity id.
 */
export function missionEntryKey(event: MissionAuditEvent): string {
  const fields = event as Partial<Record<(typeof ENTRY_IDENTITY)[number], unknown>>;
  return [event.type, ...ENTRY_IDENTITY.filter((k) => fields[k] !== undefined).map((k) => `${k}=${String(fields[k])}`)].join('/');
}

/** The mission activities' shared context. */
export interface MissionContext {
  readonly deps: MissionActivityDeps;
  /**
   * Appends one mission entry, keyed by activity id (remote) or by what it records (local,
   * `missionEntryKey`). An integrity alarm (kind Audit) fails the mission instead of being retried
   * forever; a database that is down stays retryable.
   */
  audit(event: MissionAuditEvent): Promise<unknown>;
  /** The verified definition this run holds, or a CapabilityDenied failure (the workflow's own input was not verified). */
  heldMission(def: MissionDefinition): Promise<MissionAuthority>;
  /** How gate `gateId` of mission `missionId` was decided, when it was opened for exactly `tool` with `hash`; else undefined. */
  gateDecision(missionId: string, gateId: string, tool: string, hash: string): Promise<DecisionAuthority['kind'] | undefined>;
  /** The grant, when its gate in this mission was opened for exactly that call and approved; else a CapabilityDenied failure. */
  approvedGrant(def: MissionDefinition, g: StepGrant): Promise<OneShotGrant>;
  /**
   * Checks that step `step` of the verified mission may run: every `waitFor` before it ended — as
   * the worker recorded it (settleWait), not as the workflow says — on a branch that goes on. A
   * forged activity completion can make the workflow believe a wait ended; it cannot get past here.
   */
  reachable(def: MissionDefinition, step: number): Promise<void>;
}

/** Builds the mission activities' shared context. */
export function createMissionContext(deps: MissionActivityDeps): MissionContext {
  const ctx: MissionContext = {
    deps,

    audit: (event) =>
      deps.audit.append(bookkeepingKey(missionEntryKey(event)), event).catch((e: unknown) => {
        throw toApplicationFailure(e);
      }),

    async heldMission(def) {
      const { workflowId, runId } = currentExecution();
      const held = await deps.claims.read<MissionAuthority>('mission', workflowId);
      if (def.missionId !== workflowId || !held || held.runId !== runId || held.data.definitionHash !== inputHash(def)) {
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${workflowId}: this run holds no verified definition`, {
            hint: 'a mission runs only what openMission verified',
          }),
        );
      }
      return held.data;
    },

    async gateDecision(missionId, gateId, tool, hash) {
      const gate = await deps.claims.read<GateAuthority>('gate', gateId);
      const decision = await deps.claims.read<DecisionAuthority>('gate-decision', gateId);
      const asked = gate?.workflowId === missionId && gate.data.tool === tool && gate.data.inputHash === hash;
      return asked && decision?.workflowId === missionId ? decision.data.kind : undefined;
    },

    async approvedGrant(def, g) {
      if ((await ctx.gateDecision(def.missionId, g.gateId, g.tool, g.inputHash)) !== 'approve')
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${def.missionId}: gate ${g.gateId} did not approve ${g.tool} with that input`),
        );
      return { missionId: def.missionId, gateId: g.gateId, tool: g.tool, inputHash: g.inputHash };
    },

    async reachable(def, step) {
      await ctx.heldMission(def);
      for (let j = 0; j < step; j++) {
        const s = def.steps[j];
        if (s?.kind !== 'waitFor') continue;
        const out = await deps.claims.read<WaitOutcome>('wait-outcome', missionWaitKey(def.missionId, j));
        const refuse = (why: string) =>
          toApplicationFailure(new AivyxError('CapabilityDenied', `mission ${def.missionId}: step ${step + 1} may not run: ${why}`));
        if (out?.workflowId !== def.missionId) throw refuse(`the wait at step ${j + 1} has no outcome the worker recorded`);
        if ((out.data.branch === 'event' ? (s.onEvent ?? 'continue') : (s.onTimeout ?? 'end')) === 'end')
          throw refuse(`the mission ended at step ${j + 1}`);
      }
    },
  };
  return ctx;
}
