/**
 * A lead's `agent.delegate` call, once the worker attested its child (activities/tools/agent-delegate.ts):
 * the specialist runs as a child `turnWorkflow` under an id this workflow derives from the call (so a
 * request attested for another child is refused by the child's `openTurn`, audited), cancelled with
 * the lead, and its answer comes back as the call's result — labelled untrusted when the child read
 * untrusted content, so the lead's later effects follow the untrusted-content rule. Its spend counts
 * against the lead's budget. The lead's UI summary lists its specialists.
 */
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  condition,
  executeChild,
  isCancellation,
  setCurrentDetails,
} from '@temporalio/workflow';
import type { DelegationOutput } from '../activities/tools/agent-delegate.js';
import type { TurnRequest } from '../core/channel.js';
import type { ToolOutcome, TurnOutcome } from '../core/outcomes.js';
import { delegateChildId, MAX_RUNNING_SPECIALISTS } from '../core/specialists.js';
import { addSpend } from '../core/spend.js';
import type { ToolCall } from '../core/tools.js';
import { childTurnOutcome } from './child-turn.js';
import { failureToErrorData } from './failures.js';
import type { CallLabel } from './turn-calls.js';
import type { TurnRun } from './turn-run.js';
import { cancellableBy } from './turn-scopes.js';

/** The tool whose calls start specialists. */
export const DELEGATE_TOOL = 'agent.delegate';

/** The refusal of a delegation past the ninth of one step (`earlier`: delegations before it in the batch), or undefined. */
export function delegationCapRefusal(calls: readonly ToolCall[], i: number): ToolOutcome | undefined {
  if (calls[i]?.tool !== DELEGATE_TOOL) return undefined;
  const earlier = calls.slice(0, i).filter((c) => c.tool === DELEGATE_TOOL).length;
  if (earlier < MAX_RUNNING_SPECIALISTS) return undefined;
  return {
    status: 'Failed',
    error: {
      kind: 'CapabilityDenied',
      message: `agent.delegate refused: at most ${MAX_RUNNING_SPECIALISTS} specialists run at once for one request; this is delegation ${earlier + 1} of this step`,
      hint: 'wait for their answers, then delegate the rest in a later step',
      detail: { tool: DELEGATE_TOOL, limit: MAX_RUNNING_SPECIALISTS },
    },
  };
}

/** What a delegation gives the lead: the call's result and what it adds to the lead's taint. */
export interface DelegationResult {
  outcome: ToolOutcome;
  label: CallLabel;
}

/** The attested child request in an `agent.delegate` result, or undefined when the result carries none. */
function delegationOf(out: ToolOutcome): DelegationOutput['delegation'] | undefined {
  if (out.status !== 'Completed') return undefined;
  const d = (out.output as Partial<DelegationOutput> | undefined)?.delegation;
  return d && typeof d === 'object' && typeof d.request === 'object' && typeof d.specialist === 'string' ? d : undefined;
}

/** True when `out` is a worker's attestation of a child turn (the workflow then runs it). */
export const isDelegation = (call: ToolCall, out: ToolOutcome): boolean => call.tool === DELEGATE_TOOL && delegationOf(out) !== undefined;

/**
 * Runs the specialist of the lead's call `activityId` as a child turn and returns its answer. A
 * specialist that may not run in parallel waits until no other runs, and the others wait for it.
 */
export async function runDelegation(turn: TurnRun, activityId: string, out: ToolOutcome): Promise<DelegationResult> {
  const d = delegationOf(out)!;
  // The turn id, which openTurn checked is this workflow's id (and stays the same when a history is replayed under another).
  const childId = delegateChildId(turn.req.turnId, activityId, d.specialist);
  const running = turn.delegations;
  await condition(() => !running.exclusive && (d.parallel || running.active.size === 0));
  if (!d.parallel) running.exclusive = true;
  running.active.set(childId, `${d.specialist}: working`);
  showSpecialists(turn);
  let outcome: TurnOutcome;
  try {
    outcome = await cancellableBy(
      () => turn.cancelRequested,
      () => childTurnOutcome(startChild(childId, d.request)),
    );
  } catch (err) {
    // A child that could not start (its id taken by a workflow someone started at the frontend) fails
    // this call only: the lead is told, and its other calls go on.
    outcome = isCancellation(err)
      ? { status: 'Cancelled', toolCallsMade: 0 }
      : { status: 'Failed', error: failureToErrorData(err), toolCallsMade: 0 };
  } finally {
    if (!d.parallel) running.exclusive = false;
  }
  turn.spent = addSpend(turn.spent, outcome.spend);
  // Cancelled while the lead was not: the owner stopped this one child (`aivyx specialists stop`, the UI).
  const stopped = outcome.status === 'Cancelled' && !turn.cancelRequested && !CancellationScope.current().consideredCancelled;
  running.finished.push(childId);
  running.active.delete(childId);
  showSpecialists(turn, `${d.specialist} ${stopped ? 'stopped by the owner' : outcome.status}`);
  return { outcome: answerOf(d.specialist, outcome, stopped), label: labelOf(d.specialist, outcome) };
}

/** The child turn, cancelled when the lead's scope is (a cancel of the lead, its budget) and when the lead closes. */
function startChild(childId: string, request: TurnRequest): Promise<TurnOutcome> {
  // By name: this file is imported by the turn workflow's own modules.
  return executeChild<(req: TurnRequest) => Promise<TurnOutcome>>('turnWorkflow', {
    workflowId: childId,
    args: [request],
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
  });
}

/** The lead's UI summary: its specialists and what each is doing. */
function showSpecialists(turn: TurnRun, last?: string): void {
  const { active, finished } = turn.delegations;
  const lines = [...active.entries()].map(([id, what]) => `- ${what} (${id})`);
  setCurrentDetails(
    `**Specialists** · ${active.size} running, ${finished.length} finished${last ? ` · last: ${last}` : ''}${lines.length > 0 ? `\n${lines.join('\n')}` : ''}`,
  );
}

/** The child's outcome as the lead's tool result: its answer, or why it has none (`stopped`: the owner stopped it). */
function answerOf(specialist: string, o: TurnOutcome, stopped: boolean): ToolOutcome {
  const failed = (
    kind: 'Timeout' | 'Cancelled' | 'ToolEscalation',
    message: string,
    detail: Record<string, unknown> = {},
  ): ToolOutcome => ({
    status: 'Failed',
    error: { kind, message: `specialist ${specialist} ${message}`, detail: { specialist, ...detail } },
  });
  switch (o.status) {
    case 'Completed':
      return { status: 'Completed', output: { specialist, answer: o.finalMessage }, verified: 'NotApplicable' };
    case 'TimedOut':
      return o.budget
        ? failed('Timeout', `stopped at its budget: ${o.budget.reason}`, { budget: o.budget.limit })
        : failed('Timeout', 'ran out of time before it answered');
    case 'Cancelled':
      return stopped
        ? failed('Cancelled', 'was stopped by the owner before it answered: do not ask it again for this task', { stoppedBy: 'owner' })
        : failed('Cancelled', 'was cancelled before it answered');
    case 'Escalated':
      return failed(
        'ToolEscalation',
        `stopped: its ${o.pendingTool} call needs a person's approval (${o.reason}); the request went to the owner, and once approved the call runs and the specialist's answer goes to them`,
        { pendingTool: o.pendingTool },
      );
    case 'Failed':
      return { status: 'Failed', error: { ...o.error, message: `specialist ${specialist} failed: ${o.error.message}` } };
  }
}

/** What the child's answer adds to the lead's taint: untrusted when the child read untrusted content. */
function labelOf(specialist: string, o: TurnOutcome): CallLabel {
  const read = o.readUntrusted ?? [];
  if (read.length > 0) return { untrusted: `the answer of specialist ${specialist}, who read ${read.join('; ')}`.slice(0, 400) };
  // A clean child's answer is model text: not untrusted, but no owner's text either (it names no destination for the lead).
  return undefined;
}
