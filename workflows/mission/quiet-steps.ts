/**
 * The steps that start no turn, use no tools and escalate nothing: a timer (`wait`), a wait for an
 * inbound event or an approver's yes (`waitFor`), and a notice (`notify`). A cancel ends a wait early;
 * the mission's loop then ends the mission.
 */
import { ActivityFailure, condition } from '@temporalio/workflow';
import {
  durationMs,
  eventLabel,
  stepLabel,
  waitEndsAt,
  type MissionEventMatch,
  type NotifyStep,
  type WaitForEventStep,
  type WaitForStep,
  type WaitUntilStep,
} from '../../machines/index.js';
import { deliverOrHold, holdInInbox } from '../deliver-or-hold.js';
import { ASK_TOOL_ID, missionWaitKey } from '../mission-messages.js';
import { acts } from './activities.js';
import { awaitGate } from './gates.js';
import type { MissionRun } from './state.js';
import { checked, publish } from './view.js';

/** A step that starts no turn. */
export type QuietStep = WaitForStep | WaitUntilStep | NotifyStep | WaitForEventStep;

/** How a quiet step ended: its audited outcome, whether the mission ends with it, why it failed. */
interface QuietEnd {
  outcome: string;
  ends?: boolean;
  failure?: string;
}

/** Runs a quiet step, audits how it ended and moves the mission on (a cancelled wait leaves that to the loop). */
export async function runQuietStep(run: MissionRun, step: number, attempt: number, stepDef: QuietStep): Promise<void> {
  const end = await quietStepEnd(run, step, stepDef);
  if (!end) return;
  run.countStep();
  await run.audit({ type: 'MissionStepFinished', step, attempt, stepTurnId: stepTurnId(run, step), outcome: end.outcome });
  run.mission.send(end.failure ? { type: 'STEP_FAILED', reason: end.failure } : { type: end.ends ? 'FINISH' : 'STEP_DONE' });
  checked(run);
}

const stepTurnId = (run: MissionRun, step: number): string => `${run.missionId}/step-${step}`;

/** Runs the step by its kind; undefined when a cancel ended it. */
async function quietStepEnd(run: MissionRun, step: number, stepDef: QuietStep): Promise<QuietEnd | undefined> {
  if (stepDef.kind === 'waitFor') return waitForEvent(run, step, stepDef);
  if (stepDef.kind === 'wait') return waitTimer(run, stepDef);
  if (stepDef.to) return notifyRecipients(run, step);
  await noticeToOwner(run, step, stepDef);
  return { outcome: 'Notified' };
}

/** A `waitFor` step: waits for its event (or an approver's yes) until `within`; the worker decides the branch. */
async function waitForEvent(run: MissionRun, step: number, stepDef: WaitForEventStep): Promise<QuietEnd | undefined> {
  const until = Date.now() + durationMs(stepDef.within);
  const { event } = stepDef;
  const waited = event.source === 'approval' ? await askApprover(run, step, event, until) : await awaitEvent(run, step, event, until);
  run.waitingFor = undefined;
  publish(run);
  if (!waited) return undefined;
  // The worker decides the branch from what it recorded (a forged completion cannot choose it), and later steps check it.
  const branch = await acts.settleWait({ definition: run.def, step, ...(waited.gateId ? { gateId: waited.gateId } : {}) });
  const then = branch === 'event' ? (stepDef.onEvent ?? 'continue') : (stepDef.onTimeout ?? 'end');
  return { outcome: branch === 'event' ? 'EventArrived' : 'TimedOut', ends: then === 'end' };
}

/**
 * A gate-like approval: a gate for the question; a verified approver's yes is the event, a no or
 * silence the timeout. Undefined when a cancel withdrew it.
 */
async function askApprover(
  run: MissionRun,
  step: number,
  event: Extract<MissionEventMatch, { source: 'approval' }>,
  until: number,
): Promise<{ gateId: string } | undefined> {
  await acts.openWait({ definition: run.def, step, until });
  const question = event.question;
  run.waitingFor = `${eventLabel(event)} from an approver`;
  const ended = await awaitGate(
    run,
    step,
    {
      tool: ASK_TOOL_ID,
      input: { question },
      reason: question,
      expireMs: Math.max(1, until - Date.now()),
      expiredText: 'no answer in time: the mission goes on as if the answer were no',
    },
    () => checked(run),
  );
  run.gate = undefined;
  run.gateView = undefined;
  return ended.value === 'withdrawn' ? undefined : { gateId: ended.gateId };
}

/** Holds the wait open for a verified inbound event until `until`. Undefined when a cancel ended it first. */
async function awaitEvent(
  run: MissionRun,
  step: number,
  event: MissionEventMatch,
  until: number,
): Promise<{ gateId?: string } | undefined> {
  // Open before the index row exists, so an event that comes at once finds the wait open.
  const w = (run.openWait = { waitKey: missionWaitKey(run.missionId, step), step, arrived: false });
  await acts.openWait({ definition: run.def, step, until });
  run.waitingFor = `${eventLabel(event)}, until ${new Date(until).toISOString()}`;
  publish(run);
  await condition(() => w.arrived || run.cancelled() !== undefined, Math.max(1, until - Date.now()));
  // An event the worker is checking right now settles first.
  await condition(() => run.checkingEvents === 0);
  run.openWait = undefined;
  await acts.closeWait({ definition: run.def, step });
  return run.cancelled() && !w.arrived ? undefined : {};
}

/** A `wait` step: a durable timer, shown as what the mission waits for. Undefined when a cancel ended it. */
async function waitTimer(run: MissionRun, stepDef: WaitForStep | WaitUntilStep): Promise<QuietEnd | undefined> {
  const until = waitEndsAt(stepDef, Date.now());
  run.waitingFor = `a timer until ${new Date(until).toISOString()} (${stepLabel(stepDef)})`;
  publish(run);
  await condition(() => run.cancelled() !== undefined, Math.max(1, until - Date.now()));
  run.waitingFor = undefined;
  publish(run);
  return run.cancelled() ? undefined : { outcome: 'Waited' };
}

/** A notice to the people a `notify` step names, on their channels: the worker checks the mission may send there. */
async function notifyRecipients(run: MissionRun, step: number): Promise<QuietEnd> {
  const failure = await acts.sendMissionNotice({ definition: run.def, step }).then(
    () => undefined,
    (e: unknown) => (e instanceof ActivityFailure && e.cause instanceof Error ? e.cause.message : String(e)),
  );
  return failure ? { outcome: 'Failed', failure } : { outcome: 'Notified' };
}

/** A notice to the mission's owner: on the channel the mission came from; a mission with no route (the CLI) leaves it in the inbox. */
async function noticeToOwner(run: MissionRun, step: number, stepDef: NotifyStep): Promise<void> {
  const stepId = stepTurnId(run, step);
  const { def } = run;
  const reply = {
    turnId: `${stepId}/notice`,
    channel: def.channel,
    messageId: `${stepId}/notice`,
    outcome: { status: 'Completed' as const, finalMessage: stepDef.text, toolCallsMade: 0, durationMs: 0 },
  };
  if (def.replyRoute) await deliverOrHold({ ...reply, route: def.replyRoute });
  else await holdInInbox(reply, `a notice from mission ${run.missionId}`);
}
