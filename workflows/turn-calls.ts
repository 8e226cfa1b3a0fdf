/**
 * A batch of tool calls the model proposed in one step: deterministic scope checks here, then every
 * granted call as its own activity, in parallel (the seed's A6 `join_all`). Each call's audit entry
 * is written from its row; what its result adds to the turn's taint is applied in call order once
 * the whole batch is back.
 */
import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { RunToolResult, ScheduledCall, TurnActivities } from '../activities/turn-activities.js';
import { ACTIVITY_POLICIES } from '../core/activity-policies.js';
import { Scope, type CapabilitySet } from '../core/capability/index.js';
import { AivyxError, type AivyxErrorData } from '../core/errors.js';
import type { LlmStepResult } from '../core/llm.js';
import { summarizeToolOutcome, type ToolOutcome } from '../core/outcomes.js';
import { findTool, HOST_BOUND_TOOLS, INTERRUPTIBLE_TOOLS } from '../core/tool-catalog.js';
import type { ToolCall, ToolResult } from '../core/tools.js';
import type { ToolDefinition } from '../core/tools/define-tool.js';
import { addSpend } from '../core/spend.js';
import { unvouchedLabel, type CallTaint } from '../core/taint.js';
import { loadOutcome, loadTools } from '../core/tool-offer.js';
import { TOOLS_LOAD } from '../core/tools/tools-load.js';
import { withoutEchoes } from '../core/trusted-reads.js';
import { refsIn, VALUE_ID, valueHandle, type ValueHandle } from '../core/values.js';
import { failureToErrorData } from './failures.js';
import type { TurnLoop, TurnRun } from './turn-run.js';
import { delegationCapRefusal, isDelegation, runDelegation } from './turn-delegate.js';
import { cancellableBy, onHost, raceStep, type Race } from './turn-scopes.js';

/** A model step that proposed tool calls. */
export type ToolCallsStep = Extract<LlmStepResult, { type: 'tool_calls' }>;

/**
 * What one call's result adds to the turn's taint: an untrusted source, a trusted read's output, or a
 * quarantined read's shown answer (kept out of authority fields the owner did not name).
 */
export type CallLabel = { untrusted: string } | { trusted: unknown } | { derived: string; source: string } | undefined;

/** One batch while it runs: its step, the worker's proofs of its calls, the calls scheduled before it, and each call's label. */
interface Batch {
  step: number;
  calls: readonly ToolCall[];
  proofs: NonNullable<ToolCallsStep['callProofs']>;
  prior: string[];
  labels: CallLabel[];
}

/** The input of the runTool activity. */
type RunToolInput = Parameters<TurnActivities['runTool']>[0];

/** How long a host-bound call waits for its host before the UI says the host's workers are down. */
const HOST_WAIT_NOTICE = '15 seconds';

/**
 * The runTool activity of one call, with an activity id the workflow chooses (`tool-<step>-<i>`),
 * so the call's key — workflow id / run id / activity id, which keys its row and its audit entry —
 * is known here too, even when the activity never reports back. Interruptible tools (declared in
 * their definitions: long-lived processes) are what a channel's cancel interrupts: the activity is
 * cancelled (through its heartbeats), kills its process group, and the turn waits.
 */
function toolActivity(activityId: string, interruptible: boolean, hostQueue?: string): TurnActivities['runTool'] {
  return proxyActivities<Pick<TurnActivities, 'runTool'>>({
    ...ACTIVITY_POLICIES.tool,
    activityId,
    ...(interruptible ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } : {}),
    ...(hostQueue ? { taskQueue: hostQueue, scheduleToStartTimeout: HOST_WAIT_NOTICE } : {}),
  }).runTool;
}

/** Scope-checks one call against the turn's effective set: the deterministic half of the check. */
function checkCall(
  call: ToolCall,
  effective: CapabilitySet,
): { ok: true; scope: string } | { ok: false; outcome: ToolOutcome; scope?: string } {
  const tool = findTool(call.tool);
  if (!tool) {
    return {
      ok: false,
      outcome: {
        status: 'Failed',
        error: { kind: 'NotFound', message: `no tool named "${call.tool}"`, detail: { kind: 'tool', id: call.tool } },
      },
    };
  }
  // A call that passes held values on (core/values.ts) is checked by the worker, on what will really
  // run once they are substituted (a reference is no URL or path to check here).
  if (refsIn(call.input).length > 0) return { ok: true, scope: tool.scopeBase };
  let scope: Scope;
  try {
    scope = Scope.parse(tool.requiredScope(call.input));
  } catch (e) {
    const data: AivyxErrorData = e instanceof AivyxError ? e.toData() : { kind: 'InvalidScope', message: String(e) };
    return { ok: false, outcome: { status: 'Failed', error: data } };
  }
  if (!effective.grants(scope)) {
    return { ok: false, scope: scope.toString(), outcome: { status: 'Denied', scope: scope.toString(), held: effective.toJSON() } };
  }
  return { ok: true, scope: scope.toString() };
}

/**
 * Runs the step's calls in parallel, racing the rest of the turn budget; fills `labels` (one per
 * call) with what each result adds to the taint. An in-flight tool finishes (only a long-lived
 * process is interrupted): cancellation is checked between LLM steps.
 */
export function runBatch(
  turn: TurnRun,
  loop: TurnLoop,
  step: number,
  result: ToolCallsStep,
  labels: CallLabel[],
): Promise<Race<ToolResult[]>> {
  const batch: Batch = { step, calls: result.calls, proofs: result.callProofs ?? {}, prior: [...turn.context], labels };
  return raceStep<ToolResult[]>(
    () => Promise.all(result.calls.map((call, i) => runCall(turn, loop, batch, call, i))),
    loop.opened.budgetMs - (Date.now() - turn.startedAt),
    () => turn.cancelRequested,
    false,
  );
}

/** One call of a batch: refused here (a denial is audited), or run as its own activity and recorded. */
function runCall(turn: TurnRun, loop: TurnLoop, batch: Batch, call: ToolCall, i: number): Promise<ToolResult> {
  if (call.tool === TOOLS_LOAD && turn.loadedTools) return Promise.resolve(answerLoad(turn, loop, call));
  // At most nine specialists run for one lead (the seed's Nonagon): the tenth of a step is refused, never queued.
  const overCap = delegationCapRefusal(batch.calls, i);
  if (overCap) return Promise.resolve({ callId: call.callId, tool: call.tool, outcome: overCap });
  const checked = checkCall(call, loop.effective);
  return checked.ok ? runGrantedCall(turn, loop, batch, call, i, checked.scope) : refuseCall(turn, loop, batch, call, i, checked);
}

/**
 * A `tools.load` call, answered here: it runs nothing and grants nothing (only tools the turn's
 * capabilities grant, as openTurn listed them, can be loaded); the loaded tools are offered in full
 * from the next step on (core/tool-offer.ts).
 */
function answerLoad(turn: TurnRun, loop: TurnLoop, call: ToolCall): ToolResult {
  const result = loadTools(call.input, loop.toolIds, turn.loadedTools ?? []);
  if (result.ok) turn.loadedTools = result.loaded;
  return { callId: call.callId, tool: call.tool, outcome: loadOutcome(result) };
}

/** A call the scope check refused: a denial is audited; the model gets the outcome. */
async function refuseCall(
  turn: TurnRun,
  loop: TurnLoop,
  batch: Batch,
  call: ToolCall,
  i: number,
  refused: { outcome: ToolOutcome; scope?: string },
): Promise<ToolResult> {
  if (refused.outcome.status === 'Denied' && refused.scope) {
    await turn.bookkeeping.recordScopeDenied({
      turnId: turn.req.turnId,
      step: batch.step,
      index: i,
      call: { callId: call.callId, tool: call.tool },
      scope: refused.scope,
      held: loop.effective.toJSON(),
    });
  }
  return { callId: call.callId, tool: call.tool, outcome: refused.outcome };
}

/** A granted call: run as its own activity, its audit entry written from its row, its taint label noted. */
async function runGrantedCall(turn: TurnRun, loop: TurnLoop, batch: Batch, call: ToolCall, i: number, scope: string): Promise<ToolResult> {
  const { activityId, scheduled, def, runInput } = scheduleCall(turn, loop, batch, call, i, scope);
  let ran: RunToolResult | undefined;
  let out: ToolOutcome;
  let held = false;
  try {
    ran = await runTool(turn, loop, call, activityId, runInput);
    // A quarantined read's model call counts towards the turn's budgets (checked once the batch is back).
    turn.spent = addSpend(turn.spent, ran.spend);
    const handle = heldOutcome(ran);
    held = handle !== undefined;
    out = handle ?? ran.outcome;
  } catch (err) {
    out = { status: 'Failed', error: failureToErrorData(err) };
  }
  // One source of truth: the entry is written from the call's row; the model gets the same outcome.
  await turn.recording.recordToolCall(
    ran
      ? { facts: ran.facts, outcome: summarizeToolOutcome(ran.outcome), receipt: ran.receipt }
      : { scheduled, outcome: summarizeToolOutcome(out) },
  );
  turn.owed.delete(scheduled.idemKey);
  // An attested delegation: the specialist runs as a child turn, and its answer is the call's result.
  if (ran && isDelegation(call, out)) {
    const child = await runDelegation(turn, activityId, out);
    batch.labels[i] = child.label;
    return { callId: call.callId, tool: call.tool, outcome: child.outcome };
  }
  batch.labels[i] = held ? undefined : callLabel(def, call, ran, out);
  return { callId: call.callId, tool: call.tool, outcome: out };
}

/** Counts a granted call, notes it as owed its audit entry and in the turn's context, and builds its runTool input. */
function scheduleCall(turn: TurnRun, loop: TurnLoop, batch: Batch, call: ToolCall, i: number, scope: string) {
  const { req } = turn;
  turn.toolCallsMade++;
  const activityId = `tool-${batch.step}-${i}`;
  const scheduled: ScheduledCall = { idemKey: `${turn.workflowId}/${turn.runId}/${activityId}`, turnId: req.turnId, call, scope };
  turn.owed.set(scheduled.idemKey, scheduled);
  turn.context.push(scheduled.idemKey);
  const callProof = batch.proofs[call.callId];
  const def = findTool(call.tool)!;
  const callTaint: CallTaint | undefined = turn.taint?.decide(def, canonicalOrRaw(def, call.input), loop.taintPolicy);
  const runInput: RunToolInput = {
    turnId: req.turnId,
    step: batch.step,
    call,
    scope,
    ...(callProof ? { callProof } : {}),
    ...(callTaint ? { taint: callTaint } : {}),
    ...(batch.prior.length > 0 ? { context: batch.prior } : {}),
  };
  return { activityId, scheduled, def, runInput };
}

/** The canonical input the taint rule reads; a call with value references is not parseable yet, and is read as written. */
function canonicalOrRaw(def: ToolDefinition, input: unknown): unknown {
  if (refsIn(input).length > 0) return input;
  return def.parse(input);
}

/** Runs the call's activity: on its host's queue if it is host-bound, interrupted by a cancel if it is interruptible. */
function runTool(turn: TurnRun, loop: TurnLoop, call: ToolCall, activityId: string, input: RunToolInput): Promise<RunToolResult> {
  const isCancelled = () => turn.cancelRequested;
  const hostQueue = HOST_BOUND_TOOLS.has(call.tool) ? loop.opened.hostQueue : undefined;
  const toolRun = toolActivity(activityId, INTERRUPTIBLE_TOOLS.has(call.tool), hostQueue);
  const run: typeof toolRun = hostQueue ? (i) => onHost(hostQueue, call.tool, isCancelled, () => toolRun(i)) : toolRun;
  return INTERRUPTIBLE_TOOLS.has(call.tool) ? cancellableBy(isCancelled, () => run(input)) : run(input);
}

/**
 * A result the worker held as a value (core/values.ts), as the model may see it: only a well-formed
 * handle, rebuilt here, so a result forged at the frontend that claims to be held carries no text but
 * a label as short as a genuine one. Anything else is not held (and taints as its tool says).
 */
function heldOutcome(ran: RunToolResult): ToolOutcome | undefined {
  const { outcome, facts } = ran;
  if (!facts.heldAs || outcome.status !== 'Completed') return undefined;
  const h = (outcome.output ?? {}) as Partial<ValueHandle>;
  if (h.value !== facts.heldAs || !VALUE_ID.test(h.value) || (h.kind !== 'text' && h.kind !== 'json')) return undefined;
  if (typeof h.size !== 'number' || typeof h.from !== 'string') return undefined;
  return { ...outcome, output: valueHandle(h.value, h.kind, h.size, h.from.slice(0, HANDLE_LABEL_MAX)) };
}

/** A quarantined read's shown answer (a number, a date, a choice) as the taint keeps it; a boolean names nothing. */
export function shownAnswer(out: ToolOutcome): CallLabel {
  if (out.status !== 'Completed') return undefined;
  const { answer, from } = (out.output ?? {}) as { answer?: unknown; from?: unknown };
  // No `from`: it read trusted text, and its answer is as good as the model's own.
  if ((typeof answer !== 'string' && typeof answer !== 'number') || typeof from !== 'string') return undefined;
  return { derived: String(answer), source: from.slice(0, HANDLE_LABEL_MAX) };
}

/** A handle's label is cut here, like every label the worker writes (activities/taint-labels.ts). */
const HANDLE_LABEL_MAX = 120;

/** What a call's result adds to the turn's taint. */
function callLabel(def: ToolDefinition, call: ToolCall, ran: RunToolResult | undefined, out: ToolOutcome): CallLabel {
  // A tool whose output is untrusted by definition stays so even if a result claims otherwise; with no
  // result from the worker, whatever came back cannot be vouched for (runTool re-checks the rest).
  const untrusted =
    ran?.facts.untrustedOutput ??
    (def.provenance.output === 'trusted'
      ? undefined
      : !ran
        ? unvouchedLabel(call.tool)
        : def.provenance.output === 'untrusted'
          ? `${call.tool} output`
          : undefined);
  if (untrusted) return { untrusted };
  if (call.tool === 'value.read') return shownAnswer(out);
  // Only a trusted read names destinations for the egress rule: an effect's output echoes what the model chose,
  // and so does a read's echo of its own input (core/trusted-reads.ts).
  if (out.status === 'Completed' && !def.provenance.effect)
    return { trusted: withoutEchoes(out.output, [call.input, canonicalOf(def, call.input)]) };
  return undefined;
}

/** The call's canonical input (a normalized path, a canonical URL), or undefined when it does not parse. */
function canonicalOf(def: ToolDefinition, input: unknown): unknown {
  try {
    return def.parse(input);
  } catch {
    return undefined;
  }
}
