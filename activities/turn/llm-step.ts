/**
 * The turn's model steps: the worker's spend check and ledger around each call to the model, the
 * tools it is offered, and a proof per proposed call that this run's step produced it (`runTool`
 * runs nothing else, so a forged or copied activity result cannot run a tool).
 */
import { Context } from '@temporalio/activity';
import { toolCallProofBody, type AuthorityProof } from '../../core/authority.js';
import type { LlmStepInput, LlmStepResult, ToolSpec } from '../../core/llm.js';
import type { SpendBudget } from '../../core/spend.js';
import { specialistPrompt, specialistsDescription, type Specialist } from '../../core/specialists.js';
import type { HistoryEntry } from '../../core/channel.js';
import { messageText } from '../../core/message.js';
import type { TokenUsage } from '../../core/spend.js';
import { mcpToolSpec } from '../../core/tools/mcp-tools.js';
import { compactedHistory } from '../llm/compaction.js';
import { DEFAULT_HISTORY_TOKENS } from '../llm/history-window.js';
import { priceKey, type LlmStepSink } from '../llm/llm-provider.js';
import { addUsage, entryCounter, MESSAGE_FRAMING_TOKENS, offeredSpecs, wireSpec } from '../llm/step-prompt.js';
import { SYSTEM_PROMPT, turnContext } from '../llm/system-prompt.js';
import { countTokens, loadTokenizer, tokenFamilyOf } from '../llm/token-count.js';
import { currentExecution, withHeartbeat } from '../execution.js';
import { toApplicationFailure } from '../failure.js';
import type { TurnContext } from './context.js';
import { modelSpend } from './model-spend.js';
import { SESSION_HISTORY_LIMIT } from './types.js';
import { historyLabels } from '../taint-labels.js';

/** A step's answer and the price-table key of the model that gave it. */
interface AskedModel {
  result: LlmStepResult;
  modelKey: string;
}

/** The activity that runs one LLM step. */
export function llmStepActivities(ctx: TurnContext) {
  const { deps } = ctx;
  const family = tokenFamilyOf(deps.llm.name);
  const countEntry = entryCounter(family);
  const historyBudget = deps.agent.historyTokens ?? DEFAULT_HISTORY_TOKENS;
  const timeZone = deps.agent.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  // Loading starts with the worker (about a second), not inside the first turn's budget.
  const tokenizer = loadTokenizer();
  tokenizer.catch(() => undefined);
  const spend = modelSpend(deps);

  /** Prices a step's usage and records it in the ledger (the worker's own record, whatever the workflow is told). */
  async function withSpend(input: LlmStepInput, { result, modelKey }: AskedModel): Promise<LlmStepResult> {
    if (!result.usage) return result;
    const costUsd = await spend.record(input, { kind: 'step', model: modelKey, usage: result.usage });
    return { ...result, ...(costUsd !== undefined ? { costUsd } : {}) };
  }

  // The model sees one mcp.call spec describing the configured servers' tools, discovered once per worker.
  let mcpSpec: Promise<ToolSpec> | undefined;
  // The model learns which specialists exist from agent.delegate's spec: the same bytes on every step of this worker.
  const delegateSpec = (t: ToolSpec): ToolSpec => ({
    ...t,
    description: specialistsDescription(t.description, deps.agent.specialists ?? []),
  });

  /** The tool specs the model is offered: `specs`, with the configured MCP servers' tools in `mcp.call`'s and the specialists in `agent.delegate`'s. */
  async function modelTools(offered: ToolSpec[]): Promise<ToolSpec[]> {
    const specs = offered.map((t) => (t.id === 'agent.delegate' ? delegateSpec(t) : t));
    const mcp = deps.mcp;
    if (!mcp || !specs.some((t) => t.id === 'mcp.call')) return specs;
    mcpSpec ??= mcp.pool.listTools().then(mcpToolSpec, (e: unknown) => {
      mcpSpec = undefined;
      throw e;
    });
    const spec = await mcpSpec;
    return specs.map((t) => (t.id === 'mcp.call' ? spec : t));
  }

  /**
   * Of the window, what the model may be shown: entries labelled with a source the turn did not start
   * with are withheld — an exchange another turn of the session (a mission's step, an approved call's
   * re-run) recorded since this one opened. Untrusted text reaches the model only if it counted
   * towards this turn's taint; the next turn counts it.
   */
  async function counted(turnId: string, entries: HistoryEntry[]): Promise<HistoryEntry[]> {
    if (!entries.some((e) => e.untrusted)) return entries;
    const sources = new Set((await ctx.turnAuthority(turnId))?.taint ?? []);
    return entries.filter((e) => historyLabels([e]).every((source) => sources.has(source)));
  }

  /**
   * The history the step sends: the session's token window, compacted first when it outgrew the
   * budget (with what compacting cost); the model sees who said what, not the taint labels
   * (those are the runtime's, core/taint.ts).
   */
  async function stepHistory(
    input: LlmStepInput,
    context: string,
    sink: LlmStepSink,
  ): Promise<{ history: HistoryEntry[]; usage?: TokenUsage }> {
    const { loadTurns, saveSummary } = deps.history;
    if (!loadTurns || !saveSummary) {
      const entries = await counted(input.turnId, await deps.history.load(input.sessionKey, SESSION_HISTORY_LIMIT));
      return { history: entries.map(({ role, text }) => ({ role, text })) };
    }
    await tokenizer;
    const messageTokens = countTokens(`${messageText(input.message.content)}\n\n${context}`, family) + MESSAGE_FRAMING_TOKENS;
    const { window, usage } = await compactedHistory({ loadTurns, saveSummary }, deps.llm, sink, {
      sessionKey: input.sessionKey,
      budget: historyBudget,
      messageTokens,
      count: countEntry,
      turnId: input.turnId,
      step: input.step,
    });
    const shown = await counted(input.turnId, window.entries);
    return { history: shown.map(({ role, text }) => ({ role, text })), ...(usage ? { usage } : {}) };
  }

  /**
   * The specs the step offers: of the tools `openTurn` chose for the turn's capabilities (offeredToolIds),
   * the core and loaded ones in full and the rest by name in `tools.load` (offeredSpecs), as the model sees them.
   */
  async function offeredTools(input: LlmStepInput): Promise<ToolSpec[]> {
    if (!input.toolIds) return input.tools ?? [];
    return (await modelTools(offeredSpecs(input.toolIds, input.loadedTools))).map(wireSpec);
  }

  /** The specialist this turn runs as (its verified claim names it), with its budget slice; undefined for a lead's own turn. */
  async function specialistOf(turnId: string): Promise<{ def: Specialist; spendLimit?: SpendBudget } | undefined> {
    if (!deps.agent.specialists?.length) return undefined;
    const authority = await ctx.turnAuthority(turnId);
    const def = authority?.specialist ? deps.agent.specialists.find((s) => s.name === authority.specialist) : undefined;
    return def ? { def, ...(authority?.spendLimit ? { spendLimit: authority.spendLimit } : {}) } : undefined;
  }

  /** Calls the model for one step, streaming its text to the channel as it arrives. */
  async function callModel(input: LlmStepInput): Promise<AskedModel> {
    const ctx = Context.current();
    const { sessionKey: _session, toolIds: _ids, tools: _specs, loadedTools: _loaded, ...step } = input;
    const sink: LlmStepSink = {
      text: (chunk) => deps.stream.publish(input.turnId, { type: 'text', text: chunk }),
      heartbeat: () => ctx.heartbeat(),
      signal: ctx.cancellationSignal,
    };
    try {
      const specialist = await specialistOf(input.turnId);
      // The worker's own check: an attacker at the frontend can forge what the workflow was told it spent.
      await spend.refuseOverBudget(input, input.step, specialist?.spendLimit);
      // The owner's clock when the message arrived: the same line on every step and retry of the turn.
      const context = turnContext(input.message.receivedAt, timeZone);
      const tools = await offeredTools(input);
      const { history, usage } = await withHeartbeat(() => stepHistory(input, context, sink));
      const system = specialist ? `${SYSTEM_PROMPT}\n\n${specialistPrompt(specialist.def)}` : SYSTEM_PROMPT;
      const req = { ...step, system, context, tools, history };
      // A specialist with a model of its own asks that model (its provider was built when the worker started).
      const llm = (specialist && deps.specialistLlms?.get(specialist.def.name)) ?? deps.llm;
      const result = await withHeartbeat(() => llm.step(req, sink));
      return {
        result: usage ? { ...result, usage: result.usage ? addUsage(result.usage, usage) : usage } : result,
        modelKey: priceKey(llm),
      };
    } catch (err) {
      throw toApplicationFailure(err);
    } finally {
      // The step's words go out before its result can reach the workflow (and so the outcome the channel).
      await deps.stream.flush();
    }
  }

  return {
    /**
     * One LLM step: loads the session's history, streams text to the channel as it arrives, returns
     * the whole step — with a proof per proposed call that this run's step produced it.
     */
    async llmStep(input: LlmStepInput): Promise<LlmStepResult> {
      const { runId } = currentExecution();
      // A retried step re-streams from the start: tell the channel to drop what it showed.
      if (Context.current().info.attempt > 1) deps.stream.publish(input.turnId, { type: 'step_restarted', step: input.step });
      const result = await withSpend(input, await callModel(input));
      if (result.type !== 'tool_calls') return result;
      const callProofs: Record<string, AuthorityProof> = {};
      for (const call of result.calls)
        callProofs[call.callId] = deps.proofs.seal('tool-call', input.turnId, toolCallProofBody(runId, input.step, call));
      return { ...result, callProofs };
    },
  };
}
