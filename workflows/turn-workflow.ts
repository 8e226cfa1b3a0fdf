/**
 * `turnWorkflow`: the seed's Deliverable 1 paragraph as a Temporal workflow. The workflow is
 * the turn: attestation and trust tier first, then the tool-calling loop, then exactly one of
 * the five outcomes, always followed by `TurnEnded` and finalize.
 */
import {
  ActivityCancellationType,
  ActivityFailure,
  CancellationScope,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  sleep,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { createTurnActivities, PendingCall, RunToolResult, ScheduledCall } from '../activities/turn-activities.js';
import { ACTIVITY_POLICIES, LOCAL_ACTIVITY_POLICIES } from '../core/activity-policies.js';
import { CapabilitySet, Scope } from '../core/capability/index.js';
import type { TurnRequest } from '../core/channel.js';
import { AivyxError, type AivyxErrorData } from '../core/errors.js';
import type { LlmStepResult, TranscriptItem } from '../core/llm.js';
import { summarizeToolOutcome, type ToolOutcome, type TurnOutcome } from '../core/outcomes.js';
import { findTool, HOST_BOUND_TOOLS, INTERRUPTIBLE_TOOLS, TOOL_CATALOG } from '../core/tool-catalog.js';
import type { ToolCall, ToolResult } from '../core/tools.js';
import { messageText } from '../core/message.js';
import { TurnTaint, unvouchedLabel, type CallTaint } from '../core/taint.js';
import { addSpend, NO_SPEND, spentAnything, stepSpend, type Spend } from '../core/spend.js';
import { spendStop, spendSummary } from './turn-spend.js';
import { deliverOrHold } from './deliver-or-hold.js';
import { failureToErrorData, turnFailure } from './failures.js';
import { admitTurnRequest } from './inputs.js';
import { sessionWorkflowId } from './turn-ids.js';

type TurnActivities = ReturnType<typeof createTurnActivities>;

type Bookkeeping = Pick<TurnActivities, 'openTurn' | 'recordScopeDenied' | 'finalizeTurn'>;
type Recording = Pick<TurnActivities, 'recordToolCall'>;
// Bookkeeping that is idempotent by key runs as local activities: no server round trip, and nobody at
// the frontend can complete one with a forged result. They key their entries by what they record, not
// by sequence number (`bookkeepingKey`, docs/IDEMPOTENCY.md). Runs started before this change replay on
// the remote path they recorded (`patched('local-bookkeeping')`). Past the turn budget a call's audit
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
// Interruptible tools (declared in their definitions: long-lived processes) are what a channel's cancel
// interrupts: the activity is cancelled (through its heartbeats), kills its process group, and the turn waits.

/**
 * The runTool activity of one call, with an activity id the workflow chooses (`tool-<step>-<i>`),
 * so the call's key — workflow id / run id / activity id, which keys its row and its audit entry —
 * is known here too, even when the activity never reports back.
 */
function toolActivity(activityId: string, interruptible: boolean, hostQueue?: string): TurnActivities['runTool'] {
  return proxyActivities<Pick<TurnActivities, 'runTool'>>({
    ...ACTIVITY_POLICIES.tool,
    activityId,
    ...(interruptible ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } : {}),
    ...(hostQueue ? { taskQueue: hostQueue, scheduleToStartTimeout: HOST_WAIT_NOTICE } : {}),
  }).runTool;
}

/** How long a host-bound call waits for its host before the UI says the host's workers are down. */
const HOST_WAIT_NOTICE = '15 seconds';

function notPickedUp(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}

/**
 * Runs a host-bound call on its host and only there: while none of the host's workers takes it, the
 * call is scheduled again on the same queue (same activity id, so the same idempotency key) and the
 * UI summary says what the turn waits for. It never falls back to another queue. A turn cancelled
 * meanwhile stops waiting: a call that never started is safe to drop.
 */
async function onHost<T>(hostQueue: string, tool: string, isCancelled: () => boolean, run: () => Promise<T>): Promise<T> {
  for (let waited = 0; ; waited++) {
    try {
      return await run();
    } catch (err) {
      if (!notPickedUp(err) || isCancelled()) throw err;
      setCurrentDetails(
        `**waiting for host queue ${hostQueue}**: no worker of that host has taken ${tool} (${(waited + 1) * 15} s); it runs there once one polls`,
      );
    }
  }
}

/** Runs `fn` in a scope that is cancelled as soon as `isCancelled()` turns true. */
async function cancellableBy<T>(isCancelled: () => boolean, fn: () => Promise<T>): Promise<T> {
  const work = new CancellationScope();
  const watcher = new CancellationScope();
  void watcher
    .run(() => condition(isCancelled))
    .then(
      () => work.cancel(),
      () => undefined,
    );
  try {
    return await work.run(fn);
  } finally {
    watcher.cancel();
  }
}

type Race<T> = { kind: 'done'; value: T } | { kind: 'error'; error: unknown } | { kind: 'timeout' } | { kind: 'cancel' };

/** Runs `fn` in its own cancellable scope, racing the turn budget and a channel cancel. */
async function raceStep<T>(fn: () => Promise<T>, remainingMs: number, isCancelled: () => boolean, cancelWork: boolean): Promise<Race<T>> {
  const work = new CancellationScope();
  const watchers = new CancellationScope();
  const outcome = work.run(fn).then(
    (value): Race<T> => ({ kind: 'done', value }),
    (error: unknown): Race<T> => ({ kind: 'error', error }),
  );
  const timer = watchers
    .run(() => sleep(remainingMs))
    .then(
      (): Race<T> => ({ kind: 'timeout' }),
      () => new Promise<Race<T>>(() => undefined),
    );
  const cancel = cancelWork
    ? watchers
        .run(() => condition(isCancelled))
        .then(
          (): Race<T> => ({ kind: 'cancel' }),
          () => new Promise<Race<T>>(() => undefined),
        )
    : new Promise<Race<T>>(() => undefined);
  const winner = await Promise.race([outcome, timer, cancel]);
  watchers.cancel();
  if (winner.kind === 'timeout' || winner.kind === 'cancel') work.cancel();
  return winner;
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

/** The turn workflow: returns a `TurnOutcome`; a `Failed` outcome also fails the workflow with its kind as type. */
export async function turnWorkflow(input: TurnRequest): Promise<TurnOutcome> {
  const { bookkeeping, recording } = patched('local-bookkeeping') ? local : remote;
  // A refused or malformed request fails the turn now (audited, non-retryably), never a workflow task retried forever.
  const req = await admitTurnRequest(input);
  const startedAt = Date.now();
  const { workflowId, runId } = workflowInfo();
  const sessionKey = sessionWorkflowId(req.channel.name, req.channel.sessionId);
  let cancelRequested = false;
  // Root-scope cancellation is the channel's cancel: note it and check between LLM steps.
  CancellationScope.current().cancelRequested.catch(() => {
    cancelRequested = true;
  });
  let toolCallsMade = 0;
  // What the model steps spent, summed from their results (so the checks below replay the same).
  let spent: Spend = NO_SPEND;
  // Scheduled calls whose audit entry is not yet confirmed written (finalizeTurn writes what is left).
  const owed = new Map<string, ScheduledCall>();
  let pending: PendingCall | undefined;
  let taint: TurnTaint | undefined;
  // Every call scheduled so far: runTool re-reads their labels, so a result it did not record cannot pass as clean.
  const context: string[] = [];

  const ended = await CancellationScope.nonCancellable(async (): Promise<TurnOutcome> => {
    const opened = await bookkeeping.openTurn(req);
    if (!opened.ok) return { status: 'Failed', error: opened.error, toolCallsMade };
    const effective = CapabilitySet.fromJSON(opened.effective);
    const transcript: TranscriptItem[] = [];
    // Untrusted content in context (core/taint.ts): decided here, on what this workflow holds. Histories
    // older than taint have no `opened.taint` and replay unchanged.
    const taintPolicy = opened.taint?.policy ?? {};
    taint = opened.taint
      ? new TurnTaint(opened.taint.sources, opened.taint.messageTrusted ? messageText(req.message.content) : '')
      : undefined;
    // Offer what this worker implements (the activity drops ids outside the catalog and builds the schemas).
    const toolIds = opened.toolIds ?? TOOL_CATALOG.map((t) => t.id);

    for (let step = 0; ; step++) {
      if (cancelRequested) return { status: 'Cancelled', toolCallsMade };
      const remaining = opened.budgetMs - (Date.now() - startedAt);
      if (remaining <= 0) return { status: 'TimedOut', toolCallsMade, elapsedMs: Date.now() - startedAt };
      // The session's day is checked before every step (its earlier turns may have used it up).
      const dayOver = spendStop(opened.spend, spent, 'session-day');
      if (dayOver) return { status: 'TimedOut', toolCallsMade, elapsedMs: Date.now() - startedAt, budget: dayOver };
      setCurrentDetails(`**LLM step ${step + 1}** · ${toolCallsMade} tool call(s) so far${spendSummary(spent)}`);

      const stepRace = await raceStep<LlmStepResult>(
        () => llm.llmStep({ turnId: req.turnId, step, sessionKey, message: req.message, transcript, toolIds }),
        remaining,
        () => cancelRequested,
        true,
      );
      if (stepRace.kind === 'timeout') return { status: 'TimedOut', toolCallsMade, elapsedMs: Date.now() - startedAt };
      if (stepRace.kind === 'cancel') return { status: 'Cancelled', toolCallsMade };
      if (stepRace.kind === 'error') {
        if (isCancellation(stepRace.error) && cancelRequested) return { status: 'Cancelled', toolCallsMade };
        return { status: 'Failed', error: failureToErrorData(stepRace.error), toolCallsMade };
      }
      const result = stepRace.value;
      spent = addSpend(spent, stepSpend(result));
      if (result.type === 'final') {
        return { status: 'Completed', finalMessage: result.text, toolCallsMade, durationMs: Date.now() - startedAt };
      }
      // A step that used the turn's budget up runs none of the calls it proposed: the turn ends here.
      const turnOver = spendStop(opened.spend, spent, 'turn');
      if (turnOver) return { status: 'TimedOut', toolCallsMade, elapsedMs: Date.now() - startedAt, budget: turnOver };

      // A batch: deterministic scope checks here, then every granted call as its own activity, in parallel.
      const calls = result.calls;
      const proofs = result.callProofs ?? {};
      // What each call's result adds to the turn's taint, applied in call order once the whole batch is back.
      const labels: ({ untrusted: string } | { trusted: unknown } | undefined)[] = calls.map(() => undefined);
      const prior = [...context];
      const batch = await raceStep<ToolResult[]>(
        () =>
          Promise.all(
            calls.map(async (call, i): Promise<ToolResult> => {
              const checked = checkCall(call, effective);
              if (!checked.ok) {
                if (checked.outcome.status === 'Denied' && checked.scope) {
                  await bookkeeping.recordScopeDenied({
                    turnId: req.turnId,
                    step,
                    index: i,
                    call: { callId: call.callId, tool: call.tool },
                    scope: checked.scope,
                    held: effective.toJSON(),
                  });
                }
                return { callId: call.callId, tool: call.tool, outcome: checked.outcome };
              }
              toolCallsMade++;
              const activityId = `tool-${step}-${i}`;
              const scheduled: ScheduledCall = {
                idemKey: `${workflowId}/${runId}/${activityId}`,
                turnId: req.turnId,
                call,
                scope: checked.scope,
              };
              owed.set(scheduled.idemKey, scheduled);
              context.push(scheduled.idemKey);
              const callProof = proofs[call.callId];
              const def = findTool(call.tool)!;
              const callTaint: CallTaint | undefined = taint?.decide(def, def.parse(call.input), taintPolicy);
              const runInput = {
                turnId: req.turnId,
                step,
                call,
                scope: checked.scope,
                ...(callProof ? { callProof } : {}),
                ...(callTaint ? { taint: callTaint } : {}),
                ...(prior.length > 0 ? { context: prior } : {}),
              };
              const hostQueue = HOST_BOUND_TOOLS.has(call.tool) ? opened.hostQueue : undefined;
              const toolRun = toolActivity(activityId, INTERRUPTIBLE_TOOLS.has(call.tool), hostQueue);
              const runTool: typeof toolRun = hostQueue
                ? (input) =>
                    onHost(
                      hostQueue,
                      call.tool,
                      () => cancelRequested,
                      () => toolRun(input),
                    )
                : toolRun;
              let ran: RunToolResult | undefined;
              let out: ToolOutcome;
              try {
                ran = INTERRUPTIBLE_TOOLS.has(call.tool)
                  ? await cancellableBy(
                      () => cancelRequested,
                      () => runTool(runInput),
                    )
                  : await runTool(runInput);
                out = ran.outcome;
              } catch (err) {
                out = { status: 'Failed', error: failureToErrorData(err) };
              }
              // One source of truth: the entry is written from the call's row; the model gets the same outcome.
              await recording.recordToolCall(
                ran
                  ? { facts: ran.facts, outcome: summarizeToolOutcome(ran.outcome), receipt: ran.receipt }
                  : { scheduled, outcome: summarizeToolOutcome(out) },
              );
              owed.delete(scheduled.idemKey);
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
              if (untrusted) labels[i] = { untrusted };
              // Only a trusted read names destinations for the egress rule: an effect's output echoes what the model chose.
              else if (out.status === 'Completed' && !def.provenance.effect) labels[i] = { trusted: out.output };
              return { callId: call.callId, tool: call.tool, outcome: out };
            }),
          ),
        opened.budgetMs - (Date.now() - startedAt),
        () => cancelRequested,
        // An in-flight tool finishes (only a long-lived process is interrupted, above): cancellation is checked between LLM steps.
        false,
      );
      if (batch.kind === 'timeout') return { status: 'TimedOut', toolCallsMade, elapsedMs: Date.now() - startedAt };
      if (batch.kind !== 'done')
        return { status: 'Failed', error: failureToErrorData(batch.kind === 'error' ? batch.error : 'cancelled'), toolCallsMade };

      for (const label of labels) {
        if (!label || !taint) continue;
        if ('untrusted' in label) taint.add(label.untrusted);
        else taint.addTrusted(JSON.stringify(label.trusted ?? null));
      }
      transcript.push({ role: 'assistant', ...(result.text ? { text: result.text } : {}), calls });
      transcript.push({ role: 'tool', results: batch.value });
      setCurrentDetails(`**Step ${step + 1}**: ${batch.value.map((r) => `${r.tool} → ${summarizeToolOutcome(r.outcome)}`).join(', ')}`);

      const escalation = batch.value.find((r) => r.outcome.status === 'RequiresEscalation');
      if (escalation && escalation.outcome.status === 'RequiresEscalation') {
        const call = calls.find((c) => c.callId === escalation.callId);
        pending = call ? { step, call, ...(proofs[call.callId] ? { proof: proofs[call.callId] } : {}) } : undefined;
        return {
          status: 'Escalated',
          reason: escalation.outcome.reason,
          pendingTool: escalation.tool,
          pendingInput: call?.input,
          toolCallsMade,
        };
      }
    }
  }).catch((err: unknown): TurnOutcome => ({ status: 'Failed', error: failureToErrorData(err), toolCallsMade }));
  // The totals travel with the outcome: into TurnEnded, the channel's reply and a mission's budget.
  const outcome: TurnOutcome = spentAnything(spent) ? { ...ended, spend: spent } : ended;
  if (spentAnything(spent)) setCurrentDetails(`**Ended ${outcome.status}**${spendSummary(spent)}`);

  const finalized = await CancellationScope.nonCancellable(() =>
    bookkeeping.finalizeTurn({
      request: req,
      sessionKey,
      outcome,
      durationMs: Date.now() - startedAt,
      ...(owed.size > 0 ? { owed: [...owed.values()] } : {}),
      ...(outcome.status === 'Escalated' && pending ? { pending } : {}),
      ...(taint?.tainted ? { taint: taint.sources } : {}),
      ...(context.length > 0 ? { context } : {}),
    }),
  );
  // The worker says when only the owners were asked (the call follows untrusted content): the reply names no gate.
  // (A history recorded before it said so has no answer here.)
  const told: TurnOutcome = outcome.status === 'Escalated' && finalized?.ownersOnly ? { ...outcome, ownersOnly: true } : outcome;
  // Only requests with a reply route deliver here.
  // A reply that cannot be delivered does not change the turn's outcome, which is already audited.
  if (req.replyRoute) {
    const route = req.replyRoute;
    const reply = { turnId: req.turnId, channel: req.channel, messageId: req.message.id, route, outcome: told };
    // Older runs replay without the hold (it did not exist when they gave up delivering).
    await deliverOrHold(reply, () => patched('hold-undelivered-replies'));
  }
  if (outcome.status === 'Failed') throw turnFailure(outcome.error, outcome);
  return told;
}
