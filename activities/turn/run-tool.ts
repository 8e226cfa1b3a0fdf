/**
 * Running one tool call. The call runs only when it carries the proof `llmStep` made for this run
 * and step, its scope re-checks on canonical forms against the turn's claimed capabilities (never
 * its input), and the workflow's taint decision holds against what this worker recorded. Its row
 * is written before any effect; its `ToolCall` entry is written from that row (here, or by
 * `recordToolCall` when the database was down).
 */
import { Context } from '@temporalio/activity';
import { toolCallProofBody, type ToolResultProofBody } from '../../core/authority.js';
import { CapabilitySet, Scope } from '../../core/capability/index.js';
import { inputHash } from '../../core/canonical-json.js';
import { summarizeToolOutcome, type ToolOutcome } from '../../core/outcomes.js';
import type { Spend } from '../../core/spend.js';
import { describeTaint, flatLabel } from '../../core/taint.js';
import { HOST_BOUND_TOOLS } from '../../core/tool-catalog.js';
import type { ToolCall } from '../../core/tools.js';
import { activityKey, currentExecution } from '../execution.js';
import { errorData } from '../failure.js';
import type { SpendMeter, ToolCallFacts } from '../ports.js';
import type { ToolImplementation } from '../tools/tool-implementation.js';
import { sessionWorkflowId } from '../../workflows/turn-ids.js';
import type { TurnContext } from './context.js';
import { callTaintCheck, type WorkerTaint } from './call-taint.js';
import { executeTool } from './execute-tool.js';
import { modelSpend, type SpendAt } from './model-spend.js';
import { outcomeFromSummary } from './tool-outcome.js';
import { ACCOUNTS_FOR_VALUES, valueHolding, type UsedValue } from './values.js';
import type { RunToolInput, RunToolResult, TurnAuthority } from './types.js';

/**
 * Which part of the call did not come from the owner, for the approval request: the field, and what it
 * holds when a value was substituted into it (the approver must see what will run, not a reference).
 */
function fieldReason(field: string | undefined, shows?: string): string {
  if (field === undefined) return '';
  if (field === 'content') return ': its content would become your own data';
  if (shows !== undefined)
    return `: "${field}" is ${JSON.stringify(shows)}, read from untrusted content, not from your message or configuration`;
  return `: "${field}" is not from your message or configuration`;
}

/**
 * The sources every result of a call that used values carries: whatever it says back (an output, an
 * error, a refused scope) may echo them (`fs.metadata` names the path it was given, `config.read` the
 * key), and the planning model must not read a value's text as a trusted result.
 */
function echoLabel(tool: string, used: readonly UsedValue[]): string | undefined {
  // value.read (a typed answer) and agent.delegate (a specialist that starts tainted) account for them, in the fields they take them in.
  if (used.length === 0 || Object.hasOwn(ACCOUNTS_FOR_VALUES, tool)) return undefined;
  return flatLabel(used.map((u) => u.label));
}

/** The activity that runs one tool call. */
export function runToolActivities(ctx: TurnContext) {
  const { deps, toolsById } = ctx;
  const { callTaint, grantCovers } = callTaintCheck(ctx);
  const values = valueHolding(ctx);

  const spending = modelSpend(deps);

  /** The result with its receipt (what lets `recordToolCall` trust these facts and this outcome), and what the call's own model calls spent. */
  const result = (facts: ToolCallFacts, outcome: ToolOutcome, spend?: Spend): RunToolResult => ({
    outcome,
    facts,
    receipt: deps.proofs.seal('tool-result', facts.turnId, {
      facts,
      outcome: summarizeToolOutcome(outcome),
    } satisfies ToolResultProofBody),
    ...(spend ? { spend } : {}),
  });

  /** Audits `ToolCallRejected` and refuses the call. */
  async function reject(input: RunToolInput, facts: ToolCallFacts, reason: string): Promise<RunToolResult> {
    await deps.audit.append(`${facts.idemKey}/rejected`, {
      type: 'ToolCallRejected',
      turnId: input.turnId,
      callId: String(input.call?.callId),
      toolId: String(input.call?.tool),
      reason,
    });
    return result(facts, { status: 'Failed', error: { kind: 'CapabilityDenied', message: `tool call refused: ${reason}` } });
  }

  /** Why this activity may not run the call at all: the wrong queue, or a call this run's model step did not propose. */
  function provenanceRefusal(input: RunToolInput): string | undefined {
    const { call } = input;
    // The host's files are touched only on the host's queue, however the call was routed here.
    const hostQueue = deps.agent.hostQueue;
    const queue = Context.current().info.taskQueue;
    if (hostQueue && HOST_BOUND_TOOLS.has(String(call?.tool)) && queue !== hostQueue)
      return `${String(call?.tool)} runs only on the host's task queue ${hostQueue}, not on ${queue}`;
    const { runId } = currentExecution();
    const proof = deps.proofs.check('tool-call', input.turnId, toolCallProofBody(runId, input.step, call), input.callProof);
    return proof.ok ? undefined : `the call did not come from this turn's model step (${proof.reason})`;
  }

  /**
   * The call's scope as the worker resolves it, or the outcome that ends it first. The workflow checked
   * the lexical scope; this re-checks the declared and the resolved (symlinks followed) forms, so a
   * link out of the granted tree is caught here.
   */
  async function resolvedScope(
    input: RunToolInput,
    impl: ToolImplementation,
    authority: TurnAuthority,
  ): Promise<{ scope: string } | { outcome: ToolOutcome }> {
    const { call } = input;
    const held = CapabilitySet.fromJSON(authority.effective);
    try {
      const declared = Scope.parse(impl.descriptor.requiredScope(call.input)).toString();
      const resolved = Scope.parse(await impl.resolveScope(call.input)).toString();
      for (const s of [declared, resolved])
        if (!held.grants(s)) return { outcome: await ctx.denied(input.turnId, call, s, authority.effective) };
      return { scope: resolved };
    } catch (e) {
      return { outcome: { status: 'Failed', error: errorData(e, 'Tool') } };
    }
  }

  /** What becomes of a call that passed every check: refused by the taint policy, held for a person, or run. */
  async function perform(
    input: RunToolInput,
    run: {
      call: ToolCall;
      facts: ToolCallFacts;
      impl: ToolImplementation;
      authority: TurnAuthority;
      taint: WorkerTaint;
      spend?: SpendMeter;
    },
  ): Promise<{ outcome: ToolOutcome; untrustedOutput?: string }> {
    // The call as the model wrote it (a grant approved exactly this); `run.call` has its values substituted.
    const { call } = input;
    const { taint } = run;
    const after = taint.sources.length > 0 ? describeTaint(taint.sources) : '';
    if (taint.action === 'deny')
      return {
        outcome: {
          status: 'Failed',
          error: {
            kind: 'CapabilityDenied',
            message: `${call.tool} refused${fieldReason(taint.field, taint.shows)} ${after}: the taint policy denies it`,
            hint: 'ask again in a conversation that has not read untrusted content, or change AIVYX_TAINT_POLICY',
            detail: { scope: `taint:${call.tool}`, held: [] },
          },
        },
      };
    const gated = taint.action === 'gate' || deps.agent.confirmFirst.includes(call.tool);
    if (gated && !(await grantCovers(run.authority.grant, call, run.facts.idemKey))) {
      const why =
        taint.action === 'gate' ? `${call.tool}${fieldReason(taint.field, taint.shows)} ${after}` : `${call.tool} is confirm-first`;
      return { outcome: { status: 'RequiresEscalation', reason: `${why}: a person must approve this exact call` } };
    }
    return executeTool(ctx, { ...run, scope: run.facts.scope, sources: taint.sources });
  }

  return {
    /**
     * Runs one call: checks it came from this run's model step, re-checks its scope on canonical
     * forms against the turn's claimed capabilities, writes its row, runs the tool, records the
     * outcome. The `ToolCall` entry is written by `recordToolCall` from the row.
     */
    async runTool(input: RunToolInput): Promise<RunToolResult> {
      const { turnId, call } = input;
      let facts: ToolCallFacts = {
        idemKey: activityKey(),
        turnId,
        callId: String(call?.callId),
        tool: String(call?.tool),
        scope: input.scope,
        inputHash: inputHash(call?.input),
      };
      const authority = await ctx.turnAuthority(turnId);
      if (!authority) return reject(input, facts, 'this turn was not verified in this workflow run');
      const refused = provenanceRefusal(input);
      if (refused !== undefined) return reject(input, facts, refused);
      const impl = toolsById.get(call.tool);
      if (!impl)
        return result(facts, {
          status: 'Failed',
          error: { kind: 'NotFound', message: `this worker has no tool "${call.tool}"`, detail: { kind: 'tool', id: call.tool } },
        });
      // Values are substituted first: the scope and the taint are decided on what will really run.
      const withValues = await values.resolve(input);
      if ('failed' in withValues) return result(facts, withValues.failed);
      const { call: substituted, used } = withValues;
      const echo = echoLabel(call.tool, used);
      const resolved = await resolvedScope({ ...input, call: substituted }, impl, authority);
      if ('outcome' in resolved) return result(echo ? { ...facts, untrustedOutput: echo } : facts, resolved.outcome);
      const checked = await callTaint(authority, input);
      if ('refused' in checked) return reject(input, facts, checked.refused);
      const taint = values.withValues(call, used, checked, substituted);

      // The row comes before any effect: with the database down nothing runs (the activity is retried).
      facts = { ...facts, scope: resolved.scope, ...(taint.sources.length > 0 ? { taintedBy: taint.sources } : {}) };
      const start = await deps.toolCalls.begin(facts);
      const at = spendAt(input, authority);
      // An earlier attempt finished this call: its recorded outcome is the truth (the effect is not repeated, nor paid for again).
      if (start.state === 'done') return result(facts, outcomeFromSummary(start.outcome), at && (await spending.callSpend(at)));
      const meter = at && spending.meter(at, authority.spendLimit);
      const performed = await perform(input, { call: substituted, facts, impl, authority, taint, ...(meter ? { spend: meter } : {}) });
      // What the call's model calls used is recorded before its outcome: with the database down, nothing is done yet.
      const spent = await meter?.settle();
      // A gated call's reason goes to the approver; the model never continues from it.
      const label =
        echo === undefined || performed.outcome.status === 'RequiresEscalation'
          ? performed.untrustedOutput
          : flatLabel([performed.untrustedOutput ?? '', echo]);
      // An untrusted result is held as a value: the model gets its handle, and the turn stays clean.
      const held = await values.hold(call, facts, performed.outcome, label);
      if (held) facts = { ...facts, heldAs: held.heldAs };
      else if (label) facts = { ...facts, untrustedOutput: label };
      // The outcome and its entry are written now; bookkeeping after the effect never rewrites its
      // result: if the database is down, the receipt lets recordToolCall write them once it is back.
      let outcome = held?.outcome ?? performed.outcome;
      const summary = summarizeToolOutcome(outcome);
      try {
        const written = await deps.toolCalls.audit(facts, { known: summary, missing: summary });
        if (written && written.outcome !== summary) outcome = outcomeFromSummary(written.outcome);
      } catch {
        // written by recordToolCall
      }
      return result(facts, outcome, spent);
    },
  };
}

/** Where a call's own model calls are counted: its turn, the turn's session, the step that proposed it (a claim without channel facts: nowhere). */
function spendAt(input: RunToolInput, authority: TurnAuthority): Required<SpendAt> | undefined {
  const { channel } = authority;
  if (!channel) return undefined;
  return {
    turnId: input.turnId,
    sessionKey: sessionWorkflowId(channel.name, channel.sessionId),
    step: input.step,
    callId: String(input.call.callId),
  };
}
