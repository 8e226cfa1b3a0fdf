/**
 * The turn's activities, built by factory over narrow ports. Each one that writes audit keys
 * its entry by workflow id + run id + activity id (never the attempt), so a retried activity
 * never appends twice.
 *
 * Authority (DESIGN.md D5): `openTurn` is the only place a turn request's proof is checked; it
 * claims the request for this workflow run (a copy replayed by another run finds it taken) and
 * stores the effective capability set with the claim. `runTool` takes the set and the one-shot
 * grant from that claim — never from its own input — and runs only calls that carry the proof
 * `llmStep` made for this run and step, so a forged or copied activity result cannot run a tool.
 */
import { Context } from '@temporalio/activity';
import type { AuthorityProof, ToolCallProofBody, ToolResultProofBody } from '../core/authority.js';
import { CapabilitySet, Scope, channelTrustTier, tierCeiling, type TrustTier } from '../core/capability/index.js';
import { turnProofBody } from '../core/authority.js';
import type { ChannelFacts, OneShotGrant, ReplyRoute, TurnRequest } from '../core/channel.js';
import { AivyxError, type AivyxErrorData, type AivyxErrorKind, isAivyxErrorKind } from '../core/errors.js';
import type { LlmStepInput, LlmStepResult, ToolSpec } from '../core/llm.js';
import { messageText } from '../core/message.js';
import { summarizeToolOutcome, summarizeTurnOutcome, type ToolOutcome, type TurnOutcome } from '../core/outcomes.js';
import type { ToolCall } from '../core/tools.js';
import { canonicalJson, sha256Hex } from '../core/canonical-json.js';
import { budgetUsedUp, priceOf, spendDay, spendFields, type Spend, type SpendBudget } from '../core/spend.js';
import { errorData, toApplicationFailure } from './failure.js';
import type { LlmProvider } from './llm/llm-provider.js';
import type { McpClientPool } from './mcp/mcp-client.js';
import { mcpCeiling, mcpToolSpec, type McpTierGrants } from '../core/tools/mcp-tools.js';
import {
  INTERRUPTED_OUTCOME,
  type AgentConfig,
  type AuditPort,
  type ClaimPort,
  type ConfirmationPort,
  type DeliveryPort,
  type ProofPort,
  type SessionHistoryPort,
  type SpendLedgerPort,
  type StreamPort,
  type ToolCallFacts,
  type ToolCallLogPort,
} from './ports.js';
import type { ToolImplementation } from './tools/tool-implementation.js';
import { gateApproversFor, gateAskerOf } from '../core/gate-approvers.js';
import { describeTaint, policyAction, stricter, taintGoverns, type CallTaint, type TaintPolicy } from '../core/taint.js';
import { findTool, HOST_BOUND_TOOLS, toolSpecs } from '../core/tool-catalog.js';
import { confirmationRerunTurnId, sessionWorkflowId } from '../workflows/turn-ids.js';
import { historyLabels, messageLabel, outputLabel } from './taint-labels.js';

/** Everything the turn activities need. */
export interface TurnActivityDeps {
  audit: AuditPort;
  /** Checks turn proofs and makes the tool-call proofs and result receipts. */
  proofs: ProofPort;
  /** Durable single-use authority: the turn's claim and one-shot grant uses. */
  claims: ClaimPort;
  /** Tool-call rows before and after each effect, and their `ToolCall` entries. */
  toolCalls: ToolCallLogPort;
  stream: StreamPort;
  delivery: DeliveryPort;
  history: SessionHistoryPort;
  agent: AgentConfig;
  llm: LlmProvider;
  tools: readonly ToolImplementation[];
  /** Configured MCP servers and the tiers an operator opted in to them (granted to no tier by default). */
  mcp?: { pool: McpClientPool; tierGrants: McpTierGrants };
  /** Opens a confirmation gate when a channel turn ends `Escalated`; without it such a turn just ends. */
  confirmations?: ConfirmationPort;
  /** Where `llmStep` records each step's spend and `openTurn` reads a session's day; none: no session-day budget. */
  spend?: SpendLedgerPort;
}

/** Result of `openTurn`: the turn's effective capabilities, or why it may not run. */
export type OpenTurnResult =
  | {
      ok: true;
      effective: string[];
      budgetMs: number;
      /** The catalog tools this worker implements: what the model is offered. */
      toolIds?: string[];
      /** What the workflow needs to decide taint (core/taint.ts); absent in histories older than it. */
      taint?: OpenedTaint;
      /** Where host-bound tools run (AIVYX_HOST_QUEUE); absent: on the turn's own queue. */
      hostQueue?: string;
      /** The worker's spend budgets for this turn (docs/BUDGETS.md); absent when none is configured, and in older histories. */
      spend?: OpenedSpend;
    }
  | { ok: false; error: AivyxErrorData };

/** The spend budgets a turn runs under, from the worker's config: its own, and what is left of its session's day. */
export interface OpenedSpend {
  turn?: SpendBudget;
  /** The session's budget for the day and what its earlier turns spent today (UTC) when this one opened. */
  day?: { budget: SpendBudget; used: Spend };
}

/** What `finalizeTurn` tells the workflow: whether only the owners were asked to approve its escalated call. */
export interface FinalizedTurn {
  ownersOnly?: true;
}

/** The turn's taint at its start: untrusted sources already in context, and the worker's policy. */
export interface OpenedTaint {
  /** An untrusted message, earlier untrusted turns of the conversation: in words a person reads. */
  sources: string[];
  /** The message came from a Trusted sender: the destinations it names are the owner's. */
  messageTrusted: boolean;
  policy: TaintPolicy;
}

/** What a verified turn holds, stored with its claim: `runTool` and `finalizeTurn` read it from there. */
export interface TurnAuthority {
  effective: string[];
  trustTier: TrustTier;
  sessionId: string;
  grant?: OneShotGrant;
  /** SHA-256 of the canonical proof body of the request that was verified. */
  requestHash: string;
  /** The untrusted sources in the turn's context when it opened (runTool re-checks the workflow's taint against them). */
  taint?: string[];
  /** The verified request's channel facts and reply route (tools that act for the asker read them). */
  channel?: ChannelFacts;
  replyRoute?: ReplyRoute;
}

/** Input of `runTool`. */
export interface RunToolInput {
  turnId: string;
  /** The LLM step that proposed the call (its proof is bound to it). */
  step: number;
  call: ToolCall;
  /** The proof `llmStep` made for this call. */
  callProof?: AuthorityProof;
  /** The scope the workflow checked (the activity re-derives and re-checks it). */
  scope: string;
  /** The workflow's taint decision for this call (core/taint.ts); absent = the workflow saw no untrusted content. */
  taint?: CallTaint;
  /** Keys of the calls whose results are already in the turn's context (runTool checks their labels itself). */
  context?: string[];
}

/** What `runTool` returns: the outcome, the call's facts, and a receipt that lets `recordToolCall` trust both. */
export interface RunToolResult {
  outcome: ToolOutcome;
  facts: ToolCallFacts;
  receipt: AuthorityProof;
}

/** A call as the workflow knows it when runTool returned nothing usable: its key and input. */
export interface ScheduledCall {
  idemKey: string;
  turnId: string;
  call: ToolCall;
  /** The scope the workflow checked. */
  scope: string;
}

/** Input of `recordToolCall`: what `runTool` returned, or the scheduled call when it returned nothing. */
export type RecordToolCallInput =
  { facts: ToolCallFacts; outcome: string; receipt: AuthorityProof } | { scheduled: ScheduledCall; outcome: string };

/** A call the turn ended with, still asking for a person (its proof shows the model proposed it). */
export interface PendingCall {
  step: number;
  call: ToolCall;
  proof?: AuthorityProof;
}

/** Input of `finalizeTurn`. */
export interface FinalizeTurnInput {
  request: TurnRequest;
  sessionKey: string;
  outcome: TurnOutcome;
  durationMs: number;
  /** Calls the turn scheduled whose entry was not confirmed written: any still owed is written before `TurnEnded`. */
  owed?: ScheduledCall[];
  /** The escalated call of an `Escalated` turn. */
  pending?: PendingCall;
  /** The untrusted sources the turn read (its history entries keep them, so the next turn is tainted too). */
  taint?: string[];
  /** Keys of every call the turn scheduled (their labels are re-read here). */
  context?: string[];
}

/** How many earlier messages of the session an LLM step sees. */
export const SESSION_HISTORY_LIMIT = 40;

/** The outcome an entry records for a call whose result could not be trusted or never came. */
export const UNVERIFIABLE_OUTCOME = 'Unknown(the result did not come from this worker)';

/** The workflow execution the running activity belongs to. */
export function currentExecution(): { workflowId: string; runId: string } {
  const wf = Context.current().info.workflowExecution;
  if (!wf) throw new AivyxError('Internal', 'audited activities run only inside a workflow');
  return { workflowId: wf.workflowId, runId: wf.runId };
}

/** Stable idempotency key of the running activity: workflow id + run id + activity id. */
export function activityKey(): string {
  const { workflowId, runId } = currentExecution();
  return `${workflowId}/${runId}/${Context.current().info.activityId}`;
}

/**
 * The key of a bookkeeping entry. A remote activity's id is fixed once the workflow task that
 * scheduled it completes, so its activity id keys it (as always). A local activity runs before its
 * workflow task completes: should that task fail, its retry may take new events first (a cancel, an
 * update) and give the same sequence number to another command while the entry is already written.
 * So a local activity keys its entry by what it records, which no retry changes.
 */
export function bookkeepingKey(what: string): string {
  if (!Context.current().info.isLocal) return activityKey();
  const { workflowId, runId } = currentExecution();
  return `${workflowId}/${runId}/${what}`;
}

/** Keeps an activity's heartbeat going while `work` runs, so a dead worker is noticed quickly. */
async function withHeartbeat<T>(work: () => Promise<T>, details: () => unknown = () => undefined): Promise<T> {
  const ctx = Context.current();
  // Repeats the work's last reported details: Temporal keeps only the latest heartbeat, so a bare beat would erase them.
  const timer = setInterval(() => ctx.heartbeat(details()), 1000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/** SHA-256 of the canonical JSON of a tool input: what the audit log keeps instead of the input. */
export function inputHash(input: unknown): string {
  return sha256Hex(canonicalJson(input ?? null));
}

/** True for a turn a channel started (`turn/<channel>/…`), as opposed to a mission's step turn. */
export function isChannelTurn(turnId: string): boolean {
  return turnId.startsWith('turn/');
}

/** The body of the proof that one call came from this run's step. */
export function toolCallProofBody(runId: string, step: number, call: ToolCall): ToolCallProofBody {
  return { runId, step, callId: call.callId, tool: call.tool, inputHash: inputHash(call.input) };
}

/** A tool outcome rebuilt from its recorded summary (a retried call whose first attempt finished). */
export function outcomeFromSummary(summary: string): ToolOutcome {
  const m = /^([A-Za-z]+)(?:\((.*)\))?$/s.exec(summary);
  const [, status, arg = ''] = m ?? [];
  const note = 'this result was recorded by an earlier attempt of the call; its output is not kept';
  if (status === 'Completed')
    return { status: 'Completed', output: { note }, verified: arg === 'Verified' || arg === 'Unverified' ? arg : 'NotApplicable' };
  if (status === 'Denied') return { status: 'Denied', scope: arg, held: [] };
  if (status === 'RequiresEscalation') return { status: 'RequiresEscalation', reason: 'a person must approve this exact call' };
  const kind: AivyxErrorKind = status === 'Failed' && isAivyxErrorKind(arg) ? arg : 'Tool';
  return { status: 'Failed', error: { kind, message: `${summary}: ${note}` } };
}

/** Builds the turn activities. */
export function createTurnActivities(deps: TurnActivityDeps) {
  const toolsById = new Map(deps.tools.map((t) => [t.descriptor.id, t]));
  const agentCaps = CapabilitySet.from(deps.agent.capabilities);
  const policy = deps.agent.taintPolicy ?? {};
  const places = deps.agent.trustedPlaces ?? {};

  async function denied(
    turnId: string,
    call: Pick<ToolCall, 'callId' | 'tool'>,
    scope: string,
    held: string[],
    key = activityKey(),
  ): Promise<ToolOutcome> {
    const parsed = Scope.tryParse(scope);
    await deps.audit.append(`${key}/denied/${scope}`, {
      type: 'ScopeDenied',
      turnId,
      callId: call.callId,
      toolAttempted: call.tool,
      scopeRequested: parsed?.base ?? scope,
      scopeQualifier: parsed?.qualifier ?? null,
      heldCapabilities: held,
    });
    return { status: 'Denied', scope, held };
  }

  /** The claim of the turn this activity runs in, when this run verified it. */
  async function turnAuthority(turnId: string): Promise<TurnAuthority | undefined> {
    const { workflowId, runId } = currentExecution();
    if (workflowId !== turnId) return undefined;
    const held = await deps.claims.read<TurnAuthority>('turn', turnId);
    return held && held.workflowId === workflowId && held.runId === runId ? held.data : undefined;
  }

  /** The facts of a call as the workflow scheduled it (for calls runTool never reported on). */
  const scheduledFacts = (c: ScheduledCall): ToolCallFacts => ({
    idemKey: c.idemKey,
    turnId: c.turnId,
    callId: c.call.callId,
    tool: c.call.tool,
    scope: c.scope,
    inputHash: inputHash(c.call.input),
  });

  const budgets = deps.agent.spendBudgets ?? {};
  // The key the price table knows this worker's model by (`openai:gpt-4o`; the scripted model is `scripted`).
  const modelKey = deps.llm.model ? `${deps.llm.name}:${deps.llm.model}` : deps.llm.name;

  /** The budgets a turn of `sessionKey` opens with; undefined when none is configured. */
  async function openedSpend(sessionKey: string): Promise<OpenedSpend | undefined> {
    const day =
      budgets.sessionDay && deps.spend
        ? { budget: budgets.sessionDay, used: await deps.spend.dayTotal(sessionKey, spendDay(Date.now())) }
        : undefined;
    if (!budgets.turn && !day) return undefined;
    return { ...(budgets.turn ? { turn: budgets.turn } : {}), ...(day ? { day } : {}) };
  }

  /**
   * The worker's own check before it calls the model: the workflow stops a turn at its budgets, but
   * an attacker at the frontend can complete activities with forged results (under-reported usage),
   * so the ledger — written here, by the worker — has the last word on whether another step may spend.
   */
  async function refuseOverBudget(input: LlmStepInput, sessionKey: string): Promise<void> {
    if (!deps.spend || (!budgets.turn && !budgets.sessionDay)) return;
    const [turn, day] = await Promise.all([
      budgets.turn ? deps.spend.turnTotal(input.turnId, input.step) : undefined,
      budgets.sessionDay ? deps.spend.dayTotal(sessionKey, spendDay(Date.now())) : undefined,
    ]);
    const over = (turn && budgetUsedUp(turn, budgets.turn)) ?? (day && budgetUsedUp(day, budgets.sessionDay));
    if (over)
      throw new AivyxError(
        'CapabilityDenied',
        `the model is not called: this ${turn && budgetUsedUp(turn, budgets.turn) ? 'turn' : "session's day"} has used ${over}`,
        {
          hint: 'raise the budget (docs/BUDGETS.md) or wait for the next day (UTC)',
          detail: { budget: true },
        },
      );
  }

  /** Prices a step's usage and records it in the ledger (the worker's own record, whatever the workflow is told). */
  async function withSpend(input: LlmStepInput, sessionKey: string, result: LlmStepResult): Promise<LlmStepResult> {
    if (!result.usage) return result;
    const costUsd = priceOf(result.usage, deps.agent.prices?.[modelKey]);
    await deps.spend?.record({
      turnId: input.turnId,
      runId: currentExecution().runId,
      attempt: Context.current().info.attempt,
      step: input.step,
      sessionKey,
      day: spendDay(Date.now()),
      model: modelKey,
      usage: result.usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
    });
    return { ...result, ...(costUsd !== undefined ? { costUsd } : {}) };
  }

  // The model sees one mcp.call spec describing the configured servers' tools, discovered once per worker.
  let mcpSpec: Promise<ToolSpec> | undefined;
  async function modelTools(specs: ToolSpec[]): Promise<ToolSpec[]> {
    const mcp = deps.mcp;
    if (!mcp || !specs.some((t) => t.id === 'mcp.call')) return specs;
    mcpSpec ??= mcp.pool.listTools().then(mcpToolSpec, (e: unknown) => {
      mcpSpec = undefined;
      throw e;
    });
    const spec = await mcpSpec;
    return specs.map((t) => (t.id === 'mcp.call' ? spec : t));
  }

  return {
    /**
     * Verifies the request's proof and its binding to this workflow, resolves the tier, computes the
     * effective capabilities once, claims the request for this run and writes `TurnStarted`.
     */
    async openTurn(req: TurnRequest): Promise<OpenTurnResult> {
      const { workflowId, runId } = currentExecution();
      const reject = async (reason: string): Promise<OpenTurnResult> => {
        await deps.audit.append(bookkeepingKey('opened'), {
          type: 'TurnRejected',
          // Indexed under the workflow it happened in (a copied request names another turn).
          turnId: workflowId,
          sessionId: String(req.channel?.sessionId ?? ''),
          channel: req.channel?.platform,
          channelName: String(req.channel?.name ?? ''),
          claimedTrustTier: String(req.channel?.trustTier),
          reason,
        });
        return {
          ok: false,
          error: {
            kind: 'CapabilityDenied',
            message: `turn refused: ${reason}`,
            hint: 'turns must come through a channel adapter that holds the attestation key',
            detail: { scope: 'channel.attestation', held: [] },
          },
        };
      };
      if (req.turnId !== workflowId)
        return reject(`the request is for turn "${req.turnId}" but was started as workflow "${workflowId}" (a copied request)`);
      const verdict = deps.proofs.verify(req);
      if (!verdict.ok) return reject(verdict.reason);
      let tier: Exclude<TrustTier, 'Kernel'>;
      // A mission's capability set (attested with the request) attenuates the turn further.
      let limit: CapabilitySet | undefined;
      try {
        tier = channelTrustTier(req.channel.trustTier);
        if (req.capabilityLimit) limit = CapabilitySet.from(req.capabilityLimit);
      } catch (e) {
        return reject(errorData(e).message);
      }
      // A grant is usable only by the step turns of the mission whose gate it came from.
      if (req.oneShotGrant && !req.turnId.startsWith(`${req.oneShotGrant.missionId}/`))
        return reject(`its one-shot grant belongs to mission ${req.oneShotGrant.missionId}`);
      const ceiling = agentCaps.intersect(mcpCeiling(tierCeiling(tier, deps.agent.tierPolicy), tier, deps.mcp?.tierGrants ?? {}));
      const effective = (limit ? ceiling.intersect(limit) : ceiling).toJSON();
      // Untrusted content already in context: the message itself unless the owner sent it, and earlier tainted turns.
      const fromMessage = messageLabel(tier, req.channel.sender, req.channel.name, places.owners);
      const history = await deps.history.load(sessionWorkflowId(req.channel.name, req.channel.sessionId), SESSION_HISTORY_LIMIT);
      const taint = [...(fromMessage ? [fromMessage] : []), ...historyLabels(history)];
      const authority: TurnAuthority = {
        effective,
        trustTier: tier,
        sessionId: req.channel.sessionId,
        ...(req.oneShotGrant ? { grant: req.oneShotGrant } : {}),
        requestHash: sha256Hex(canonicalJson(turnProofBody(req))),
        taint,
        channel: req.channel,
        ...(req.replyRoute ? { replyRoute: req.replyRoute } : {}),
      };
      const claim = await deps.claims.claim({ kind: 'turn', subject: req.turnId, workflowId, runId, data: authority });
      if (claim.status === 'taken')
        return reject(`this request was already used by run ${claim.by.runId} of ${claim.by.workflowId} (a replayed request runs nothing)`);
      await deps.audit.append(bookkeepingKey('opened'), {
        type: 'TurnStarted',
        turnId: req.turnId,
        sessionId: req.channel.sessionId,
        channel: req.channel.platform,
        channelName: req.channel.name,
        trustTier: tier,
        effectiveCapabilities: claim.data.effective,
      });
      const spend = await openedSpend(sessionWorkflowId(req.channel.name, req.channel.sessionId));
      return {
        ok: true,
        effective: claim.data.effective,
        budgetMs: deps.agent.budgetMs,
        ...(spend ? { spend } : {}),
        toolIds: [...toolsById.keys()],
        taint: { sources: claim.data.taint ?? [], messageTrusted: fromMessage === undefined, policy: deps.agent.taintPolicy ?? {} },
        ...(deps.agent.hostQueue ? { hostQueue: deps.agent.hostQueue } : {}),
      };
    },

    /**
     * One LLM step: loads the session's history, streams text to the channel as it arrives, returns
     * the whole step — with a proof per proposed call that this run's step produced it.
     */
    async llmStep(input: LlmStepInput): Promise<LlmStepResult> {
      const ctx = Context.current();
      const { sessionKey, ...rest } = input;
      const { runId } = currentExecution();
      // A retried step re-streams from the start: tell the channel to drop what it showed.
      if (ctx.info.attempt > 1) deps.stream.publish(input.turnId, { type: 'step_restarted', step: input.step });
      let result: LlmStepResult;
      try {
        // The model sees who said what, not the taint labels (those are the runtime's, core/taint.ts).
        await refuseOverBudget(input, sessionKey);
        const history = (await deps.history.load(sessionKey, SESSION_HISTORY_LIMIT)).map(({ role, text }) => ({ role, text }));
        const { toolIds, tools: specs, ...step } = rest;
        const offered = toolIds ? toolSpecs(toolIds.filter((id) => findTool(id) !== undefined)) : (specs ?? []);
        const req = { ...step, tools: await modelTools(offered), history };
        result = await withHeartbeat(() =>
          deps.llm.step(req, {
            text: (chunk) => deps.stream.publish(req.turnId, { type: 'text', text: chunk }),
            heartbeat: () => ctx.heartbeat(),
            signal: ctx.cancellationSignal,
          }),
        );
      } catch (err) {
        throw toApplicationFailure(err);
      } finally {
        // The step's words go out before its result can reach the workflow (and so the outcome the channel).
        await deps.stream.flush();
      }
      result = await withSpend(input, sessionKey, result);
      if (result.type !== 'tool_calls') return result;
      const callProofs: Record<string, AuthorityProof> = {};
      for (const call of result.calls)
        callProofs[call.callId] = deps.proofs.seal('tool-call', input.turnId, toolCallProofBody(runId, input.step, call));
      return { ...result, callProofs };
    },

    /** Audits a workflow input the workflow refused (see `workflows/inputs.ts`); the input itself is never logged. */
    async recordRefusal(input: { what: string; reason: string }): Promise<void> {
      const info = Context.current().info;
      await deps.audit.append(activityKey(), {
        type: 'InputRefused',
        turnId: currentExecution().workflowId,
        workflowType: info.workflowType ?? '?',
        what: input.what,
        reason: input.reason,
      });
    },

    /** Audits a denial the workflow decided (the deterministic half of the scope check). */
    async recordScopeDenied(input: {
      turnId: string;
      /** The call's step and place in it (runs since local bookkeeping send them: they key the entry). */
      step?: number;
      index?: number;
      call: Pick<ToolCall, 'callId' | 'tool'>;
      scope: string;
      held: string[];
    }): Promise<void> {
      // Remote (older runs, which send no step): the activity id, as those runs recorded it.
      const key = input.step === undefined ? activityKey() : bookkeepingKey(`tool-${input.step}-${input.index ?? 0}`);
      await denied(input.turnId, input.call, input.scope, input.held, key);
    },

    /**
     * Runs one call: checks it came from this run's model step, re-checks its scope on canonical
     * forms against the turn's claimed capabilities, writes its row, runs the tool, records the
     * outcome. The `ToolCall` entry is written by `recordToolCall` from the row.
     */
    async runTool(input: RunToolInput): Promise<RunToolResult> {
      const { turnId, call, step } = input;
      const key = activityKey();
      const { runId } = currentExecution();
      let facts: ToolCallFacts = {
        idemKey: key,
        turnId,
        callId: String(call?.callId),
        tool: String(call?.tool),
        scope: input.scope,
        inputHash: inputHash(call?.input),
      };
      const done = (outcome: ToolOutcome): RunToolResult => ({
        outcome,
        facts,
        receipt: deps.proofs.seal('tool-result', turnId, { facts, outcome: summarizeToolOutcome(outcome) } satisfies ToolResultProofBody),
      });
      const reject = async (reason: string): Promise<RunToolResult> => {
        await deps.audit.append(`${key}/rejected`, {
          type: 'ToolCallRejected',
          turnId,
          callId: String(call?.callId),
          toolId: String(call?.tool),
          reason,
        });
        return done({ status: 'Failed', error: { kind: 'CapabilityDenied', message: `tool call refused: ${reason}` } });
      };
      const authority = await turnAuthority(turnId);
      if (!authority) return reject('this turn was not verified in this workflow run');
      // The host's files are touched only on the host's queue, however the call was routed here.
      const hostQueue = deps.agent.hostQueue;
      if (hostQueue && HOST_BOUND_TOOLS.has(String(call?.tool)) && Context.current().info.taskQueue !== hostQueue)
        return reject(`${String(call?.tool)} runs only on the host's task queue ${hostQueue}, not on ${Context.current().info.taskQueue}`);
      const proof = deps.proofs.check('tool-call', turnId, toolCallProofBody(runId, step, call), input.callProof);
      if (!proof.ok) return reject(`the call did not come from this turn's model step (${proof.reason})`);

      const impl = toolsById.get(call.tool);
      if (!impl)
        return done({
          status: 'Failed',
          error: { kind: 'NotFound', message: `this worker has no tool "${call.tool}"`, detail: { kind: 'tool', id: call.tool } },
        });
      const held = CapabilitySet.fromJSON(authority.effective);
      let scope: string;
      try {
        // The workflow checked the lexical scope; the activity re-checks the declared and the resolved
        // (symlinks followed) forms, so a link out of the granted tree is caught here.
        const declared = Scope.parse(impl.descriptor.requiredScope(call.input)).toString();
        const resolved = Scope.parse(await impl.resolveScope(call.input)).toString();
        for (const s of [declared, resolved]) if (!held.grants(s)) return done(await denied(turnId, call, s, authority.effective));
        scope = resolved;
      } catch (e) {
        return done({ status: 'Failed', error: errorData(e, 'Tool') });
      }

      const taint = await callTaint(authority, input);
      if ('refused' in taint) return reject(taint.refused);

      // The row comes before any effect: with the database down nothing runs (the activity is retried).
      facts = { ...facts, scope, ...(taint.sources.length > 0 ? { taintedBy: taint.sources } : {}) };
      const start = await deps.toolCalls.begin(facts);
      // An earlier attempt finished this call: its recorded outcome is the truth (the effect is not repeated).
      if (start.state === 'done') return done(outcomeFromSummary(start.outcome));

      let outcome: ToolOutcome;
      const after = taint.sources.length > 0 ? describeTaint(taint.sources) : '';
      const gated = taint.action === 'gate' || deps.agent.confirmFirst.includes(call.tool);
      if (taint.action === 'deny') {
        outcome = {
          status: 'Failed',
          error: {
            kind: 'CapabilityDenied',
            message: `${call.tool} refused ${after}: the taint policy denies it`,
            hint: 'ask again in a conversation that has not read untrusted content, or change AIVYX_TAINT_POLICY',
            detail: { scope: `taint:${call.tool}`, held: [] },
          },
        };
      } else if (gated && !(await grantCovers(authority.grant, call, key))) {
        const why = taint.action === 'gate' ? `${call.tool} ${after}` : `${call.tool} is confirm-first`;
        outcome = { status: 'RequiresEscalation', reason: `${why}: a person must approve this exact call` };
      } else {
        deps.stream.publish(turnId, { type: 'tool_started', tool: call.tool, callId: call.callId });
        try {
          const ctx = Context.current();
          let lastDetails: unknown;
          const result = await withHeartbeat(
            () =>
              impl.run(call.input, {
                signal: ctx.cancellationSignal,
                heartbeat: (d) => {
                  lastDetails = d;
                  ctx.heartbeat(d);
                },
                idemKey: key,
                turnId,
                sessionId: authority.sessionId,
                ...(authority.channel ? { channel: authority.channel } : {}),
                ...(authority.replyRoute ? { replyRoute: authority.replyRoute } : {}),
                held: authority.effective,
                taint: taint.sources,
                recordMemoryAccess: async (entry) => {
                  await deps.audit.append(`${key}/memory/${entry.operation}`, { type: 'MemoryAccess', turnId, ...entry });
                },
              }),
            () => lastDetails,
          );
          outcome =
            result.kind === 'completed'
              ? { status: 'Completed', output: result.output, verified: result.verified }
              : { status: 'RequiresEscalation', reason: result.reason };
          const label = outputLabel(call.tool, call.input, scope, result.kind === 'completed' ? result.untrusted : undefined, places);
          if (label) facts = { ...facts, untrustedOutput: label };
        } catch (e) {
          outcome = { status: 'Failed', error: errorData(e, 'Tool') };
          // A failure's message can carry what the tool read (a server's error text): labelled like its output.
          const label = outputLabel(call.tool, call.input, scope, undefined, places);
          if (label) facts = { ...facts, untrustedOutput: label };
        }
        deps.stream.publish(turnId, {
          type: 'tool_finished',
          tool: call.tool,
          callId: call.callId,
          summary: summarizeToolOutcome(outcome),
        });
      }
      // The outcome and its entry are written now; bookkeeping after the effect never rewrites its
      // result: if the database is down, the receipt lets recordToolCall write them once it is back.
      const summary = summarizeToolOutcome(outcome);
      try {
        const written = await deps.toolCalls.audit(facts, { known: summary, missing: summary });
        if (written && written.outcome !== summary) outcome = outcomeFromSummary(written.outcome);
      } catch {
        // written by recordToolCall
      }
      return done(outcome);
    },

    /** Writes a call's `ToolCall` entry from its row, exactly once; retried until the database answers. */
    async recordToolCall(input: RecordToolCallInput): Promise<{ outcome: string }> {
      const { workflowId, runId } = currentExecution();
      // A receipt vouches for runTool's facts and outcome; without a valid one the row (if runTool got that far) is the only truth.
      const trusted =
        'facts' in input &&
        deps.proofs.check(
          'tool-result',
          workflowId,
          { facts: input.facts, outcome: input.outcome } satisfies ToolResultProofBody,
          input.receipt,
        ).ok;
      const f = 'facts' in input ? input.facts : scheduledFacts(input.scheduled);
      if (f.turnId !== workflowId || !f.idemKey.startsWith(`${workflowId}/${runId}/`)) {
        throw toApplicationFailure(new AivyxError('CapabilityDenied', `recordToolCall: call ${f.idemKey} is not one of this run's calls`));
      }
      const ending = trusted
        ? { known: input.outcome, running: input.outcome, missing: input.outcome }
        : // The activity failed without a result (or with one that is not ours): the row, if any, is the truth.
          { running: INTERRUPTED_OUTCOME, missing: 'facts' in input ? UNVERIFIABLE_OUTCOME : `NotRun(${input.outcome})` };
      try {
        return { outcome: (await deps.toolCalls.audit(f, ending))?.outcome ?? INTERRUPTED_OUTCOME };
      } catch (e) {
        throw toApplicationFailure(
          e instanceof AivyxError
            ? e
            : new AivyxError('Storage', `recording tool call ${f.idemKey} failed: ${errorData(e).message}`, {
                hint: 'retried until the database answers',
              }),
        );
      }
    },

    /** Writes owed call entries and `TurnEnded`, records a completed exchange, opens a confirmation, delivers the outcome. */
    async finalizeTurn(input: FinalizeTurnInput): Promise<FinalizedTurn> {
      const { request, outcome } = input;
      // Calls the turn scheduled whose entry was not confirmed (the budget ran out first): a call that
      // never started is fenced off and recorded as not run; a finished one gets its entry now; one
      // still running writes its own entry when it finishes (or reconciliation does, if it never does).
      for (const c of input.owed ?? []) await deps.toolCalls.audit(scheduledFacts(c), { missing: 'NotRun(the turn ended first)' });
      const authority = await turnAuthority(request.turnId);
      if (outcome.status === 'Completed' && authority) {
        // A turn that read untrusted content leaves it in the conversation: the next turn starts tainted.
        const context = await deps.toolCalls.contextLabels(input.context ?? []);
        const sources = [
          ...new Set([
            ...(authority.taint ?? []),
            ...(input.taint ?? []),
            ...context.untrusted,
            ...(context.unrecorded.length > 0 ? ['a result this worker did not record'] : []),
          ]),
        ];
        const untrusted = sources.length > 0 ? describeTaint(sources) : undefined;
        const fromMessage = messageLabel(authority.trustTier, request.channel.sender, request.channel.name, places.owners);
        await deps.history.record(input.sessionKey, {
          turnId: request.turnId,
          receivedAt: request.message.receivedAt,
          entries: [
            { role: 'user', text: messageText(request.message.content), ...(fromMessage ? { untrusted: fromMessage } : {}) },
            { role: 'assistant', text: outcome.finalMessage, ...(untrusted ? { untrusted } : {}) },
          ],
        });
      }
      await deps.audit.append(bookkeepingKey('ended'), {
        type: 'TurnEnded',
        turnId: currentExecution().workflowId,
        outcome: summarizeTurnOutcome(outcome),
        toolCallsMade: outcome.toolCallsMade,
        durationMs: input.durationMs,
        ...(outcome.spend ? spendFields(outcome.spend) : {}),
      });
      // A channel's turn that asked for approval gets its gate now, before the channel shows the outcome
      // (mission step turns are gated by their own mission: their ids do not start with `turn/`).
      // The worker opens it only for a verified turn and a call this run's model step really proposed.
      let told: TurnOutcome = outcome;
      if (outcome.status === 'Escalated' && deps.confirmations && isChannelTurn(request.turnId) && authority && input.pending) {
        const { runId } = currentExecution();
        const p = input.pending;
        const genuine =
          p.call.tool === outcome.pendingTool &&
          deps.proofs.check('tool-call', request.turnId, toolCallProofBody(runId, p.step, p.call), p.proof).ok;
        if (genuine && sha256Hex(canonicalJson(turnProofBody(request))) === authority.requestHash) {
          // Why the call was gated, from this worker's own records: after untrusted content only the owners decide.
          const taintedBy = [
            ...new Set([
              ...(authority.taint ?? []),
              ...(await deps.toolCalls.callTaint([request.turnId], p.call.tool, inputHash(p.call.input))),
            ]),
          ];
          const asker = gateAskerOf({ ...request.channel, trustTier: authority.trustTier });
          const approvers = gateApproversFor(asker, taintedBy, places.owners ?? []);
          const { gateId } = await deps.confirmations.open(request, outcome, { approvers, taintedBy });
          const rerun = confirmationRerunTurnId(request.turnId);
          // No gate id where the untrusted sender reads it: it would not work for them, and it invites the attempt.
          const text =
            taintedBy.length > 0
              ? `approval needed: the request went to the owner; once approved, the call runs as turn ${rerun}`
              : `approval needed: gate ${gateId} (aivyx mission approve ${gateId}); once approved, the call runs as turn ${rerun}`;
          deps.stream.publish(request.turnId, { type: 'status', text });
          if (taintedBy.length > 0) told = { ...outcome, ownersOnly: true };
        }
      }
      try {
        await deps.delivery.deliver(request, told);
      } catch (e) {
        throw toApplicationFailure(e instanceof AivyxError ? e : new AivyxError('Channel', `delivery failed: ${errorData(e).message}`));
      }
      return told.status === 'Escalated' && told.ownersOnly ? { ownersOnly: true } : {};
    },
  };

  /**
   * The worker's re-check of the workflow's taint decision: every result in the turn's context must be
   * one this worker recorded, every untrusted source it knows of must be one the workflow counted,
   * and an effect's action is at least as strict as this worker's own policy.
   */
  async function callTaint(
    authority: TurnAuthority,
    input: RunToolInput,
  ): Promise<{ refused: string } | { sources: string[]; action: CallTaint['action'] }> {
    const context = await deps.toolCalls.contextLabels(input.context ?? []);
    if (context.unrecorded.length > 0)
      return { refused: `${context.unrecorded.length} result(s) in this turn's context were not produced by this worker` };
    const declared = input.taint?.sources ?? [];
    const unaccounted = [...(authority.taint ?? []), ...context.untrusted].filter((s) => !declared.includes(s));
    if (unaccounted.length > 0)
      return { refused: `the turn read untrusted content the workflow did not account for (${unaccounted.join('; ')})` };
    if (declared.length === 0) return { sources: [], action: 'free' };
    const def = findTool(input.call.tool);
    const declaredAction = input.taint?.action ?? 'gate';
    // An egress-only call is free when the owner named its destination: only the workflow holds that text.
    const own = !def ? 'gate' : !taintGoverns(def) ? 'free' : def.provenance.effect ? policyAction(def.id, policy) : declaredAction;
    return { sources: declared, action: stricter(declaredAction, own) };
  }

  /** True when the turn's grant covers exactly this call and is used here first (a grant works once). */
  async function grantCovers(grant: OneShotGrant | undefined, call: ToolCall, key: string): Promise<boolean> {
    if (!grant || grant.tool !== call.tool || grant.inputHash !== inputHash(call.input)) return false;
    const { workflowId, runId } = currentExecution();
    const use = await deps.claims.claim({ kind: 'grant-use', subject: grant.gateId, workflowId, runId, data: { call: key } });
    return use.status === 'claimed' || (use.status === 'held' && use.data.call === key);
  }
}

/** The activity object a worker registers. */
export type TurnActivities = ReturnType<typeof createTurnActivities>;
