/**
 * `turnWorkflow`: the seed's Deliverable 1 paragraph as a Temporal workflow. The workflow is
 * the turn: attestation and trust tier first, then the tool-calling loop, then exactly one of
 * the five outcomes, always followed by `TurnEnded` and finalize. A step's batch of tool calls
 * runs in turn-calls.ts; what the run holds is one `TurnRun` (turn-run.ts).
 */
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  workflowInfo,
} from '@temporalio/workflow';
import type { TurnActivities } from '../activities/turn-activities.js';
import { ACTIVITY_POLICIES, LOCAL_ACTIVITY_POLICIES } from '../core/activity-policies.js';
import { CapabilitySet } from '../core/capability/index.js';
import type { TurnRequest } from '../core/channel.js';
import type { LlmStepResult, TranscriptItem } from '../core/llm.js';
import { summarizeToolOutcome, type TurnOutcome } from '../core/outcomes.js';
import { TOOL_CATALOG } from '../core/tool-catalog.js';
import { carriedTools, loadTools, toolOffer } from '../core/tool-offer.js';
import { TOOLS_LOAD } from '../core/tools/tools-load.js';
import type { ToolCall, ToolResult } from '../core/tools.js';
import { messageText } from '../core/message.js';
import { TurnTaint } from '../core/taint.js';
import { addSpend, NO_SPEND, spentAnything, stepSpend, type BudgetBreach } from '../core/spend.js';
import { spendStop, spendSummary } from './turn-spend.js';
import { deliverOrHold } from './deliver-or-hold.js';
import { failureToErrorData, turnFailure } from './failures.js';
import { admitTurnRequest } from './inputs.js';
import {
  DEFERRED_TOOLS,
  HOLD_UNDELIVERED_REPLIES,
  LOCAL_BOOKKEEPING,
  RENDER_VALUES,
  RESUME_APPROVED_CALLS,
  RETRY_REFUSED_RESULTS,
} from './patches.js';
import { refsIn, renderedSources } from '../core/values.js';
import { isRefusedResult } from './interceptors.js';
import { runBatch, shownAnswer, type CallLabel, type ToolCallsStep } from './turn-calls.js';
import { sessionWorkflowId } from './turn-ids.js';
import type { Bookkeeping, OpenedResume, OpenedTurn, Recording, TurnLoop, TurnRun } from './turn-run.js';
import { raceStep, type Race } from './turn-scopes.js';

// Bookkeeping that is idempotent by key runs as local activities: no server round trip, and nobody at
// the frontend can complete one with a forged result. They key their entries by what they record, not
// by sequence number (`bookkeepingKey`, docs/IDEMPOTENCY.md). Runs started before this change replay on
// the remote path they recorded (LOCAL_BOOKKEEPING, patches.ts). Past the turn budget a call's audit
// entry is still owed: finalizeTurn writes it before TurnEnded.
const remote = {
  bookkeeping: proxyActivities<Bookkeeping>(ACTIVITY_POLICIES.bookkeeping),
  recording: proxyActivities<Recording>(ACTIVITY_POLICIES.recording),
};
const local = {
  bookkeeping: proxyLocalActivities<Bookkeeping>(LOCAL_ACTIVITY_POLICIES.bookkeeping),
  recording: proxyLocalActivities<Recording>(LOCAL_ACTIVITY_POLICIES.recording),
};
const llm = proxyActivities<Pick<TurnActivities, 'llmStep'>>(ACTIVITY_POLICIES.llm);

/**
 * The turn workflow: returns a `TurnOutcome`; a `Failed` outcome also fails the workflow with its kind as type.
 * `carried` is what the session passes on from its earlier turns (the deferred tools they loaded): not
 * attested, and harmless, since only tools the turn's capabilities grant are ever offered.
 */
export async function turnWorkflow(input: TurnRequest, carried?: unknown): Promise<TurnOutcome> {
  const { bookkeeping, recording } = patched(LOCAL_BOOKKEEPING) ? local : remote;
  // A refused or malformed request fails the turn now (audited, non-retryably), never a workflow task retried forever.
  const req = await admitTurnRequest(input);
  const turn = startTurn(req, bookkeeping, recording, carriedTools(carried));
  const ended = await CancellationScope.nonCancellable(() => runTurn(turn)).catch((err: unknown): TurnOutcome => ({
    status: 'Failed',
    error: failureToErrorData(err),
    toolCallsMade: turn.toolCallsMade,
  }));
  // The totals travel with the outcome: into TurnEnded, the channel's reply and a mission's budget.
  const spent: TurnOutcome = spentAnything(turn.spent) ? { ...ended, spend: turn.spent } : ended;
  // A specialist tells its lead what untrusted content it read: the lead labels its answer so.
  const outcome: TurnOutcome = req.delegatedBy && turn.taint?.tainted ? { ...spent, readUntrusted: turn.taint.sources } : spent;
  if (spentAnything(turn.spent)) setCurrentDetails(`**Ended ${outcome.status}**${spendSummary(turn.spent)}`);
  const finalized = await finalize(turn, outcome);
  // The worker says when only the owners were asked (the call follows untrusted content): the reply names no gate.
  // (A history recorded before it said so has no answer here.)
  const told: TurnOutcome = outcome.status === 'Escalated' && finalized?.ownersOnly ? { ...outcome, ownersOnly: true } : outcome;
  await deliver(turn, told);
  if (outcome.status === 'Failed') throw turnFailure(outcome.error, outcome);
  // The session passes what was loaded on to its next turn, so the offered prefix stays the same there.
  return turn.loadedTools?.length ? { ...told, loadedTools: turn.loadedTools } : told;
}

/** The turn's state at its start; a cancel of the root scope (the channel's cancel) is noted and checked between LLM steps. */
function startTurn(req: TurnRequest, bookkeeping: Bookkeeping, recording: Recording, carried: string[]): TurnRun {
  const startedAt = Date.now();
  const { workflowId, runId } = workflowInfo();
  const turn: TurnRun = {
    req,
    startedAt,
    workflowId,
    runId,
    sessionKey: sessionWorkflowId(req.channel.name, req.channel.sessionId),
    bookkeeping,
    recording,
    cancelRequested: false,
    toolCallsMade: 0,
    spent: NO_SPEND,
    owed: new Map(),
    pending: undefined,
    taint: undefined,
    context: [],
    plannerText: undefined,
    transcript: [],
    trusted: [],
    delegations: { active: new Map(), finished: [], exclusive: false },
    carriedTools: carried,
    loadedTools: undefined,
  };
  CancellationScope.current().cancelRequested.catch(() => {
    turn.cancelRequested = true;
  });
  return turn;
}

/** Opens the turn (the worker verifies it and computes its capabilities), then runs model steps until one ends it. */
async function runTurn(turn: TurnRun): Promise<TurnOutcome> {
  const opened = await turn.bookkeeping.openTurn(turn.req);
  if (!opened.ok) return { status: 'Failed', error: opened.error, toolCallsMade: turn.toolCallsMade };
  const loop = openLoop(turn, opened);
  let first = 0;
  // A rerun of an approved call: that call first, then the model continues where the turn that asked stopped.
  if (opened.resume && patched(RESUME_APPROVED_CALLS)) {
    const ended = await resumeApproved(turn, loop, opened.resume);
    if (ended) return ended;
    first = opened.resume.step + 1;
  }
  for (let step = first; ; step++) {
    const ended = await runStep(turn, loop, step);
    if (ended) return ended;
  }
}

/** What the loop works with: the effective capabilities, the transcript, the taint and the tools offered. */
function openLoop(turn: TurnRun, opened: OpenedTurn): TurnLoop {
  // Untrusted content in context (core/taint.ts): decided here, on what this workflow holds. Histories
  // older than taint have no `opened.taint` and replay unchanged.
  turn.taint = opened.taint ? new TurnTaint(opened.taint.sources, trustedText(turn, opened.taint), opened.taint.mcpTools) : undefined;
  // Offer what this worker implements (the activity drops ids outside the catalog and builds the schemas).
  const toolIds = opened.toolIds ?? TOOL_CATALOG.map((t) => t.id);
  // Deferred tools (core/tool-offer.ts): the session's loaded ones that this turn is granted stay loaded.
  if (patched(DEFERRED_TOOLS)) turn.loadedTools = toolOffer(toolIds, turn.carriedTools).loaded;
  return {
    opened,
    effective: CapabilitySet.fromJSON(opened.effective),
    transcript: turn.transcript,
    taintPolicy: opened.taint?.policy ?? {},
    toolIds,
  };
}

/** The text the owner gave this turn: their message (when they sent it) and their identities from configuration. */
function trustedText(turn: TurnRun, taint: NonNullable<OpenedTurn['taint']>): string {
  const message = taint.messageTrusted ? messageText(turn.req.message.content) : '';
  return [message, ...(taint.owners ?? [])].join('\n');
}

const elapsed = (turn: TurnRun): number => Date.now() - turn.startedAt;
const timedOut = (turn: TurnRun, budget?: BudgetBreach): TurnOutcome => ({
  status: 'TimedOut',
  toolCallsMade: turn.toolCallsMade,
  elapsedMs: elapsed(turn),
  ...(budget ? { budget } : {}),
});

/** One model step and the calls it proposed; the turn's outcome if this step ends it. */
async function runStep(turn: TurnRun, loop: TurnLoop, step: number): Promise<TurnOutcome | undefined> {
  const { opened } = loop;
  if (turn.cancelRequested) return { status: 'Cancelled', toolCallsMade: turn.toolCallsMade };
  const remaining = opened.budgetMs - elapsed(turn);
  if (remaining <= 0) return timedOut(turn);
  // The session's day is checked before every step (its earlier turns may have used it up).
  const dayOver = spendStop(opened.spend, turn.spent, 'session-day');
  if (dayOver) return timedOut(turn, dayOver);
  setCurrentDetails(`**LLM step ${step + 1}** · ${turn.toolCallsMade} tool call(s) so far${spendSummary(turn.spent)}`);

  const stepRace = await askModel(turn, loop, step);
  if (stepRace.kind !== 'done') return modelStepEnd(turn, stepRace);
  const result = stepRace.value;
  turn.spent = addSpend(turn.spent, stepSpend(result));
  if (result.type === 'final') {
    const finalMessage = await renderFinal(turn, result.text);
    return { status: 'Completed', finalMessage, toolCallsMade: turn.toolCallsMade, durationMs: elapsed(turn) };
  }
  // A step that used the turn's budget up runs none of the calls it proposed: the turn ends here.
  const turnOver = spendStop(opened.spend, turn.spent, 'turn');
  if (turnOver) return timedOut(turn, turnOver);
  return runCalls(turn, loop, step, result);
}

/**
 * The answer the owner reads: references to held values (core/values.ts) replaced by their content.
 * The session's history keeps the model's own text, so the next turn's context holds no untrusted text.
 */
async function renderFinal(turn: TurnRun, text: string): Promise<string> {
  if (refsIn(text).length === 0 || !patched(RENDER_VALUES)) return text;
  turn.plannerText = text;
  // A specialist's answer goes to its lead's model, not to a person: the values it shows are untrusted text there.
  if (turn.req.delegatedBy) for (const source of renderedSources(turn.transcript, refsIn(text))) turn.taint?.add(source);
  return turn.bookkeeping.renderValues({ turnId: turn.req.turnId, text, context: [...turn.context] });
}

/** How many forged results of one model step are refused and asked again before the turn gives up. */
const MAX_REFUSED_RESULTS = 3;

/**
 * Asks the model for step `step`. A result the worker's codec refused — a completion someone at the
 * frontend forged (junk, or another workflow's encrypted result) — costs the attacker, not the owner:
 * it is audited and the step asked again under a new activity id; only repeated refusals end the turn.
 */
async function askModel(turn: TurnRun, loop: TurnLoop, step: number): Promise<Race<LlmStepResult>> {
  const { req, sessionKey } = turn;
  const { transcript, toolIds } = loop;
  const loaded = turn.loadedTools ? { loadedTools: [...turn.loadedTools] } : {};
  for (let refused = 0; ; refused++) {
    const race = await raceStep<LlmStepResult>(
      () => llm.llmStep({ turnId: req.turnId, step, sessionKey, message: req.message, transcript, toolIds, ...loaded }),
      loop.opened.budgetMs - elapsed(turn),
      () => turn.cancelRequested,
      true,
    );
    if (race.kind !== 'error' || !isRefusedResult(race.error) || !patched(RETRY_REFUSED_RESULTS)) return race;
    const reason = failureToErrorData(race.error).message;
    await turn.bookkeeping.recordRefusedResult({ activity: 'llmStep', step, attempt: refused + 1, reason });
    if (refused + 1 >= MAX_REFUSED_RESULTS) {
      const message = `the model step's result was refused ${refused + 1} times in a row (completions forged at the Temporal frontend?): ${reason}`;
      return { kind: 'error', error: ApplicationFailure.create({ type: 'Crypto', nonRetryable: true, message }) };
    }
    setCurrentDetails(`**LLM step ${step + 1}** asked again: a result was refused (${refused + 1} of ${MAX_REFUSED_RESULTS})`);
  }
}

/** How a model step that did not answer ends the turn: the budget, a cancel, or its failure. */
function modelStepEnd(turn: TurnRun, race: Exclude<Race<LlmStepResult>, { kind: 'done' }>): TurnOutcome {
  const { toolCallsMade } = turn;
  if (race.kind === 'timeout') return timedOut(turn);
  if (race.kind === 'cancel') return { status: 'Cancelled', toolCallsMade };
  if (isCancellation(race.error) && turn.cancelRequested) return { status: 'Cancelled', toolCallsMade };
  return { status: 'Failed', error: failureToErrorData(race.error), toolCallsMade };
}

/**
 * Continues the escalated turn a rerun resumes: its transcript, the calls in its context and its
 * trusted reads, then the approved call, run at the step that proposed it (openTurn's proof binds it
 * there), its real result in place of the escalation the model saw.
 */
function resumeApproved(turn: TurnRun, loop: TurnLoop, resume: OpenedResume): Promise<TurnOutcome | undefined> {
  const { call, step } = resume;
  loop.transcript.push(...resume.transcript);
  turn.context.push(...resume.context);
  for (const text of resume.trusted) trustRead(turn, text);
  // The quarantined answers the model was shown stay out of authority fields in this run too; what it loaded stays loaded.
  for (const item of resume.transcript)
    if (item.role === 'tool')
      for (const r of item.results) {
        const answer = r.tool === 'value.read' ? shownAnswer(r.outcome) : undefined;
        if (answer && 'derived' in answer) turn.taint?.addDerived(answer.derived, answer.source);
        if (r.tool === TOOLS_LOAD) reload(turn, loop, r.outcome);
      }
  setCurrentDetails(`**Resumed** ${resume.from}: the approved ${call.tool} runs first`);
  // The same step's other gated calls go again with it: each asks for its own approval next.
  const calls = [call, ...resume.alsoAsked.map((a) => a.call)];
  const callProofs = Object.fromEntries([[call.callId, resume.callProof], ...resume.alsoAsked.map((a) => [a.call.callId, a.proof])]);
  return runCalls(turn, loop, step, { type: 'tool_calls', calls, callProofs }, true);
}

/** A load the resumed transcript shows, loaded again (only what this turn is granted, as any load). */
function reload(turn: TurnRun, loop: TurnLoop, outcome: ToolResult['outcome']): void {
  if (!turn.loadedTools || outcome.status !== 'Completed') return;
  const result = loadTools({ tools: (outcome.output as { loaded?: unknown } | undefined)?.loaded }, loop.toolIds, turn.loadedTools);
  if (result.ok) turn.loadedTools = result.loaded;
}

/** Notes a trusted read's output: destinations it names are the owner's (and a resume record keeps it). */
function trustRead(turn: TurnRun, text: string): void {
  turn.trusted.push(text);
  turn.taint?.addTrusted(text);
}

/** Puts a resumed batch's results in place of what the model saw for those calls (the last results it saw). */
function settleResumed(transcript: TranscriptItem[], results: ToolResult[]): void {
  const last = transcript.findLastIndex((item) => item.role === 'tool');
  const item = transcript[last];
  if (!item || item.role !== 'tool') {
    transcript.push({ role: 'tool', results });
    return;
  }
  const ran = new Map(results.map((r) => [r.callId, r]));
  const kept = item.results.map((r) => ran.get(r.callId) ?? r);
  const added = results.filter((r) => !item.results.some((old) => old.callId === r.callId));
  transcript[last] = { role: 'tool', results: [...kept, ...added] };
}

/**
 * Runs the step's batch of calls, adds it to the transcript (a resumed batch: in place of its escalation)
 * and the taint; the outcome if the batch ends the turn.
 */
async function runCalls(
  turn: TurnRun,
  loop: TurnLoop,
  step: number,
  result: ToolCallsStep,
  resumed = false,
): Promise<TurnOutcome | undefined> {
  const { calls } = result;
  // What each call's result adds to the turn's taint, applied in call order once the whole batch is back.
  const labels: CallLabel[] = calls.map(() => undefined);
  const batch = await runBatch(turn, loop, step, result, labels);
  if (batch.kind === 'timeout') return timedOut(turn);
  if (batch.kind !== 'done')
    return {
      status: 'Failed',
      error: failureToErrorData(batch.kind === 'error' ? batch.error : 'cancelled'),
      toolCallsMade: turn.toolCallsMade,
    };

  for (const label of labels) {
    if (!label || !turn.taint) continue;
    if ('untrusted' in label) turn.taint.add(label.untrusted);
    else if ('derived' in label) turn.taint.addDerived(label.derived, label.source);
    else trustRead(turn, JSON.stringify(label.trusted ?? null));
  }
  if (resumed) settleResumed(loop.transcript, batch.value);
  else {
    loop.transcript.push({ role: 'assistant', ...(result.text ? { text: result.text } : {}), calls });
    loop.transcript.push({ role: 'tool', results: batch.value });
  }
  setCurrentDetails(`**Step ${step + 1}**: ${batch.value.map((r) => `${r.tool} → ${summarizeToolOutcome(r.outcome)}`).join(', ')}`);
  // Specialists' and quarantined reads' spend counts against this turn's budget (a batch without either spends nothing: the check before it stands).
  const turnOver = spendStop(loop.opened.spend, turn.spent, 'turn');
  if (turnOver) return timedOut(turn, turnOver);
  return escalated(turn, step, result, batch.value);
}

/** The Escalated outcome if a call of the batch requires escalation (its call becomes the turn's pending call). */
function escalated(turn: TurnRun, step: number, result: ToolCallsStep, results: ToolResult[]): TurnOutcome | undefined {
  const escalation = results.find((r) => r.outcome.status === 'RequiresEscalation');
  if (!escalation || escalation.outcome.status !== 'RequiresEscalation') return undefined;
  const proofs = result.callProofs ?? {};
  const proved = (c: ToolCall) => ({ call: c, ...(proofs[c.callId] ? { proof: proofs[c.callId] } : {}) });
  const call = result.calls.find((c) => c.callId === escalation.callId);
  const others = results.filter((r) => r.outcome.status === 'RequiresEscalation' && r.callId !== escalation.callId);
  const alsoAsked = result.calls.filter((c) => others.some((r) => r.callId === c.callId)).map(proved);
  turn.pending = call ? { step, ...proved(call), ...(alsoAsked.length > 0 ? { alsoAsked } : {}) } : undefined;
  return {
    status: 'Escalated',
    reason: escalation.outcome.reason,
    pendingTool: escalation.tool,
    pendingInput: call?.input,
    toolCallsMade: turn.toolCallsMade,
  };
}

/** Writes TurnEnded (and any call's entry still owed), whatever the outcome; a cancel does not stop it. */
function finalize(turn: TurnRun, outcome: TurnOutcome): ReturnType<Bookkeeping['finalizeTurn']> {
  const { owed, pending, taint, context, transcript, trusted } = turn;
  return CancellationScope.nonCancellable(() =>
    turn.bookkeeping.finalizeTurn({
      request: turn.req,
      sessionKey: turn.sessionKey,
      outcome,
      durationMs: elapsed(turn),
      ...(owed.size > 0 ? { owed: [...owed.values()] } : {}),
      ...(outcome.status === 'Escalated' && pending ? { pending, resume: { transcript, trusted } } : {}),
      ...(taint?.tainted ? { taint: taint.sources } : {}),
      ...(context.length > 0 ? { context } : {}),
      ...(turn.plannerText !== undefined ? { plannerText: turn.plannerText } : {}),
    }),
  );
}

/**
 * Delivers the reply, for requests with a reply route. A reply that cannot be delivered does not
 * change the turn's outcome, which is already audited.
 */
async function deliver(turn: TurnRun, outcome: TurnOutcome): Promise<void> {
  const { req } = turn;
  if (!req.replyRoute) return;
  // A specialist answers its lead; only its request for an approval goes to the owner's channel.
  if (req.delegatedBy && outcome.status !== 'Escalated') return;
  const reply = { turnId: req.turnId, channel: req.channel, messageId: req.message.id, route: req.replyRoute, outcome };
  // Older runs replay without the hold (it did not exist when they gave up delivering).
  await deliverOrHold(reply, () => patched(HOLD_UNDELIVERED_REPLIES));
}
