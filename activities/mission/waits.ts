/**
 * A mission's waits (`waitFor` steps): indexed for the channel adapters while open, an event checked
 * before it may end one, and how each ended decided from what the worker recorded — every later
 * step runs only on that branch (`reachable`).
 */
import { Context } from '@temporalio/activity';
import type { MissionEventProofBody } from '../../core/authority.js';
import { inputHash } from '../../core/canonical-json.js';
import { AivyxError } from '../../core/errors.js';
import { eventMatches } from '../../machines/index.js';
import { ASK_TOOL_ID, missionWaitKey, type MissionDefinition, type MissionEventRequest } from '../../workflows/mission-messages.js';
import { currentExecution } from '../execution.js';
import { toApplicationFailure } from '../failure.js';
import type { MissionContext } from './context.js';
import type { Verdict, WaitBranchTaken, WaitOpened, WaitOutcome } from './types.js';

/** A `waitFor` step of a mission definition. */
type WaitForStep = Extract<MissionDefinition['steps'][number], { kind: 'waitFor' }>;

/** The activities of a mission's waits. */
export function waitActivities({ deps, audit, heldMission, reachable, gateDecision }: MissionContext) {
  /**
   * The branch this run's records give wait `waitKey`: `event` for a verified event, or for the
   * question's gate (`gateId`) a verified approval (`event`) or denial (`timeout`); undefined: neither.
   */
  async function verifiedBranch(step: WaitForStep, waitKey: string, gateId = ''): Promise<WaitBranchTaken | undefined> {
    const { workflowId } = currentExecution();
    if (step.event.source !== 'approval') {
      const event = await deps.claims.read('mission-event', waitKey);
      return event?.workflowId === workflowId ? 'event' : undefined;
    }
    const kind = await gateDecision(workflowId, gateId, ASK_TOOL_ID, inputHash({ question: step.event.question }));
    if (!gateId.startsWith(`${workflowId}/gate-`) || kind === undefined) return undefined;
    return kind === 'approve' ? 'event' : 'timeout';
  }

  return {
    /**
     * Opens step `step`'s wait (a `waitFor` step of the verified definition): indexes it for the
     * channel adapters, until `until` (epoch ms, the workflow's clock). Returns the wait's key.
     */
    async openWait(input: { definition: MissionDefinition; step: number; until: number }): Promise<{ waitKey: string }> {
      const def = input.definition;
      await reachable(def, input.step);
      const step = def.steps[input.step];
      if (step?.kind !== 'waitFor')
        throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no waitFor step ${input.step}`));
      const { workflowId, runId } = currentExecution();
      const waitKey = missionWaitKey(def.missionId, input.step);
      // When it times out, by the server's clock: what settleWait checks a timeout against (the first opening's wins).
      await deps.claims.claim<WaitOpened>({ kind: 'mission-wait', subject: waitKey, workflowId, runId, data: { until: input.until } });
      if (step.event.source !== 'approval')
        await deps.waits?.open({
          waitKey,
          missionId: def.missionId,
          step: input.step,
          match: step.event,
          until: input.until,
          since: Context.current().info.currentAttemptScheduledTimestampMs,
        });
      return { waitKey };
    },

    /** Removes step `step`'s wait from the index (it ended: an event, a timeout or a cancel). */
    async closeWait(input: { definition: MissionDefinition; step: number }): Promise<void> {
      await heldMission(input.definition);
      await deps.waits?.close(missionWaitKey(input.definition.missionId, input.step));
    },

    /**
     * Decides how step `step`'s wait ended — from what the worker itself recorded, never from what the
     * workflow believes (an activity completion can be forged): `event` when a verified event claimed
     * the wait (or, for an approval, a verified approver approved its gate), `timeout` when a verified
     * approver denied it or the server's clock is past the wait's end. Recorded once; every later step
     * runs only on the branch recorded here (`reachable`).
     */
    async settleWait(input: { definition: MissionDefinition; step: number; gateId?: string }): Promise<WaitBranchTaken> {
      const def = input.definition;
      await heldMission(def);
      const { workflowId, runId } = currentExecution();
      const step = def.steps[input.step];
      if (step?.kind !== 'waitFor')
        throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no waitFor step ${input.step}`));
      const waitKey = missionWaitKey(def.missionId, input.step);
      const settled = await deps.claims.read<WaitOutcome>('wait-outcome', waitKey);
      if (settled?.workflowId === workflowId) return settled.data.branch;
      const opened = await deps.claims.read<WaitOpened>('mission-wait', waitKey);
      if (opened?.workflowId !== workflowId)
        throw toApplicationFailure(new AivyxError('CapabilityDenied', `mission ${workflowId}: wait ${waitKey} was never opened`));
      const now = Context.current().info.currentAttemptScheduledTimestampMs;
      let branch = await verifiedBranch(step, waitKey, input.gateId);
      if (branch === undefined && now >= opened.data.until) branch = 'timeout';
      if (branch === undefined)
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${workflowId}: wait ${waitKey} has neither a verified event nor reached its end`),
        );
      const claim = await deps.claims.claim<WaitOutcome>({ kind: 'wait-outcome', subject: waitKey, workflowId, runId, data: { branch } });
      return claim.data.branch;
    },

    /**
     * Checks an event sent to step `step`'s wait before the wait ends: its proof (made by the channel
     * adapter that authenticated the sender; bound to this mission, this wait, this event and its
     * facts), that the facts satisfy the step as the verified definition states it, and that it is
     * the wait's first event. Audits `MissionEventReceived`, or `MissionEventRejected` with the reason.
     */
    async verifyMissionEvent(input: { definition: MissionDefinition; step: number; request: MissionEventRequest }): Promise<Verdict> {
      const def = input.definition;
      await heldMission(def);
      const { workflowId, runId } = currentExecution();
      const req = input.request;
      const reject = async (reason: string): Promise<Verdict> => {
        await audit({ type: 'MissionEventRejected', turnId: workflowId, missionId: workflowId, waitKey: String(req.waitKey), reason });
        return { ok: false, reason };
      };
      const body: MissionEventProofBody = { waitKey: req.waitKey, eventId: req.eventId, facts: req.facts };
      const verdict = deps.proofs.check('mission-event', workflowId, body, req.proof);
      if (!verdict.ok) return reject(verdict.reason);
      const step = def.steps[input.step];
      if (req.waitKey !== missionWaitKey(workflowId, input.step) || step?.kind !== 'waitFor')
        return reject(`mission ${workflowId} is not waiting at ${req.waitKey}`);
      if (!eventMatches(step.event, req.facts)) return reject(`the event does not match what step ${input.step + 1} waits for`);
      const claim = await deps.claims.claim<{ eventId: string }>({
        kind: 'mission-event',
        subject: req.waitKey,
        workflowId,
        runId,
        data: { eventId: req.eventId },
      });
      if (claim.data.eventId !== req.eventId) return reject(`wait ${req.waitKey} already took another event: a wait ends once`);
      await audit({
        type: 'MissionEventReceived',
        turnId: workflowId,
        missionId: workflowId,
        waitKey: req.waitKey,
        source: req.facts.source,
        from: req.facts.from,
        eventId: req.eventId,
      });
      return { ok: true };
    },
  };
}
