/**
 * The turn's activities, built by factory over narrow ports. Each one that writes audit keys
 * its entry by workflow id + run id + activity id (never the attempt), so a retried activity
 * never appends twice.
 */
import { Context } from '@temporalio/activity';
import { CapabilitySet, Scope, channelTrustTier, tierCeiling } from '../core/capability/index.js';
import type { OneShotGrant, TurnRequest } from '../core/channel.js';
import { AivyxError, type AivyxErrorData } from '../core/errors.js';
import type { LlmStepInput, LlmStepResult, ToolSpec } from '../core/llm.js';
import { messageText } from '../core/message.js';
import { summarizeToolOutcome, summarizeTurnOutcome, type ToolOutcome, type TurnOutcome } from '../core/outcomes.js';
import type { ToolCall } from '../core/tools.js';
import { canonicalJson, sha256Hex } from '../infra/crypto/index.js';
import { errorData, toApplicationFailure } from './failure.js';
import type { LlmProvider } from './llm/llm-provider.js';
import type { McpClientPool } from './mcp/mcp-client.js';
import { mcpCeiling, mcpToolSpec, type McpTierGrants } from '../core/tools/mcp-tools.js';
import type { AgentConfig, AttestationPort, AuditPort, ConfirmationPort, DeliveryPort, SessionHistoryPort, StreamPort } from './ports.js';
import type { ToolImplementation } from './tools/tool-implementation.js';

/** Everything the turn activities need. */
export interface TurnActivityDeps {
  audit: AuditPort;
  attestation: AttestationPort;
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
}

/** Result of `openTurn`: the turn's effective capabilities, or why it may not run. */
export type OpenTurnResult =
  | {
      ok: true;
      effective: string[];
      budgetMs: number;
      /** The catalog tools this worker implements: what the model is offered (optional for histories recorded before it). */
      toolIds?: string[];
    }
  | { ok: false; error: AivyxErrorData };

/** Input of `runTool`. */
export interface RunToolInput {
  turnId: string;
  call: ToolCall;
  /** The scope the workflow checked. */
  scope: string;
  effective: string[];
  /** The turn's attested one-shot grant, passed by the workflow to at most one call of the granted tool. */
  grant?: OneShotGrant;
  /** The turn's session (from its attested channel facts): what `audit.read:own-session` reads. */
  sessionId?: string;
}

/** How many earlier messages of the session an LLM step sees. */
export const SESSION_HISTORY_LIMIT = 40;

/** Stable idempotency key of the running activity: workflow id + run id + activity id. */
export function activityKey(): string {
  const info = Context.current().info;
  const wf = info.workflowExecution;
  if (!wf) throw new AivyxError('Internal', 'audited activities run only inside a workflow');
  return `${wf.workflowId}/${wf.runId}/${info.activityId}`;
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

/** Builds the turn activities. */
export function createTurnActivities(deps: TurnActivityDeps) {
  const toolsById = new Map(deps.tools.map((t) => [t.descriptor.id, t]));
  const agentCaps = CapabilitySet.from(deps.agent.capabilities);

  async function denied(turnId: string, call: Pick<ToolCall, 'callId' | 'tool'>, scope: string, held: string[]): Promise<ToolOutcome> {
    const parsed = Scope.tryParse(scope);
    await deps.audit.append(activityKey(), {
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
    /** Verifies the attestation, resolves the tier, computes effective capabilities once, writes `TurnStarted`. */
    async openTurn(req: TurnRequest): Promise<OpenTurnResult> {
      const verdict = deps.attestation.verify(req);
      let reason = verdict.ok ? undefined : verdict.reason;
      let tier;
      // A mission's capability set (attested with the request) attenuates the turn further.
      let limit: CapabilitySet | undefined;
      if (verdict.ok) {
        try {
          tier = channelTrustTier(req.channel.trustTier);
          if (req.capabilityLimit) limit = CapabilitySet.from(req.capabilityLimit);
        } catch (e) {
          reason = errorData(e).message;
        }
      }
      if (reason !== undefined || tier === undefined) {
        await deps.audit.append(activityKey(), {
          type: 'TurnRejected',
          turnId: req.turnId,
          sessionId: req.channel.sessionId,
          channel: req.channel.platform,
          channelName: req.channel.name,
          claimedTrustTier: String(req.channel.trustTier),
          reason: reason ?? 'unknown trust tier',
        });
        return {
          ok: false,
          error: { kind: 'CapabilityDenied', message: `turn refused: ${reason}`, hint: 'turns must come through a channel adapter that holds the attestation key', detail: { scope: 'channel.attestation', held: [] } },
        };
      }
      const ceiling = agentCaps.intersect(mcpCeiling(tierCeiling(tier, deps.agent.tierPolicy), tier, deps.mcp?.tierGrants ?? {}));
      const effective = (limit ? ceiling.intersect(limit) : ceiling).toJSON();
      await deps.audit.append(activityKey(), {
        type: 'TurnStarted',
        turnId: req.turnId,
        sessionId: req.channel.sessionId,
        channel: req.channel.platform,
        channelName: req.channel.name,
        trustTier: tier,
        effectiveCapabilities: effective,
      });
      return { ok: true, effective, budgetMs: deps.agent.budgetMs, toolIds: [...toolsById.keys()] };
    },

    /** One LLM step: loads the session's history, streams text to the channel as it arrives, returns the whole step. */
    async llmStep(input: LlmStepInput): Promise<LlmStepResult> {
      const ctx = Context.current();
      const { sessionKey, ...rest } = input;
      // A retried step re-streams from the start: tell the channel to drop what it showed.
      if (ctx.info.attempt > 1) deps.stream.publish(input.turnId, { type: 'step_restarted', step: input.step });
      try {
        const req = { ...rest, tools: await modelTools(rest.tools), history: await deps.history.load(sessionKey, SESSION_HISTORY_LIMIT) };
        return await withHeartbeat(() =>
          deps.llm.step(req, {
            text: (chunk) => deps.stream.publish(req.turnId, { type: 'text', text: chunk }),
            heartbeat: () => ctx.heartbeat(),
            signal: ctx.cancellationSignal,
          }),
        );
      } catch (err) {
        throw toApplicationFailure(err);
      }
    },

    /** Audits a denial the workflow decided (the deterministic half of the scope check). */
    async recordScopeDenied(input: { turnId: string; call: Pick<ToolCall, 'callId' | 'tool'>; scope: string; held: string[] }): Promise<void> {
      await denied(input.turnId, input.call, input.scope, input.held);
    },

    /** Re-checks the scope on canonical forms, runs the tool, and appends its `ToolCall` entry. */
    async runTool(input: RunToolInput): Promise<ToolOutcome> {
      const { turnId, call } = input;
      const impl = toolsById.get(call.tool);
      if (!impl) return { status: 'Failed', error: { kind: 'NotFound', message: `this worker has no tool "${call.tool}"`, detail: { kind: 'tool', id: call.tool } } };
      const held = CapabilitySet.fromJSON(input.effective);
      const key = activityKey();
      let scope: string;
      try {
        // The workflow checked the lexical scope; the activity re-checks the declared and the resolved
        // (symlinks followed) forms, so a link out of the granted tree is caught here.
        const declared = Scope.parse(impl.descriptor.requiredScope(call.input)).toString();
        const resolved = Scope.parse(await impl.resolveScope(call.input)).toString();
        for (const s of [declared, resolved]) if (!held.grants(s)) return await denied(turnId, call, s, input.effective);
        scope = resolved;
      } catch (e) {
        return { status: 'Failed', error: errorData(e, 'Tool') };
      }

      const started = Date.now();
      let outcome: ToolOutcome;
      // A gate's grant covers exactly this tool with exactly this input (hash), nothing else.
      const granted = input.grant !== undefined && input.grant.tool === call.tool && input.grant.inputHash === inputHash(call.input);
      if (deps.agent.confirmFirst.includes(call.tool) && !granted) {
        outcome = { status: 'RequiresEscalation', reason: `${call.tool} is confirm-first: a person must approve this exact call` };
      } else {
        deps.stream.publish(turnId, { type: 'tool_started', tool: call.tool, callId: call.callId });
        try {
          const ctx = Context.current();
          let lastDetails: unknown;
          const result = await withHeartbeat(() =>
            impl.run(call.input, {
              signal: ctx.cancellationSignal,
              heartbeat: (d) => {
                lastDetails = d;
                ctx.heartbeat(d);
              },
              idemKey: key,
              turnId,
              sessionId: input.sessionId,
              held: input.effective,
              recordMemoryAccess: async (entry) => {
                await deps.audit.append(`${key}/memory/${entry.operation}`, { type: 'MemoryAccess', turnId, ...entry });
              },
            }),
            () => lastDetails,
          );
          outcome = result.kind === 'completed' ? { status: 'Completed', output: result.output, verified: result.verified } : { status: 'RequiresEscalation', reason: result.reason };
        } catch (e) {
          outcome = { status: 'Failed', error: errorData(e, 'Tool') };
        }
        deps.stream.publish(turnId, { type: 'tool_finished', tool: call.tool, callId: call.callId, summary: summarizeToolOutcome(outcome) });
      }
      // A retry whose first attempt already audited this call must not append a second entry.
      if (!(Context.current().info.attempt > 1 && (await deps.audit.has(key)))) {
        await deps.audit.append(key, {
          type: 'ToolCall',
          turnId,
          callId: call.callId,
          toolId: call.tool,
          scopeUsed: scope,
          inputHash: inputHash(call.input),
          outcome: summarizeToolOutcome(outcome),
          durationMs: Date.now() - started,
        });
      }
      return outcome;
    },

    /** Writes `TurnEnded`, records a completed exchange in the session history, and delivers the outcome. */
    async finalizeTurn(input: { request: TurnRequest; sessionKey: string; outcome: TurnOutcome; durationMs: number }): Promise<void> {
      const { request, outcome } = input;
      if (outcome.status === 'Completed') {
        await deps.history.record(input.sessionKey, {
          turnId: request.turnId,
          receivedAt: request.message.receivedAt,
          entries: [
            { role: 'user', text: messageText(request.message.content) },
            { role: 'assistant', text: outcome.finalMessage },
          ],
        });
      }
      await deps.audit.append(activityKey(), {
        type: 'TurnEnded',
        turnId: request.turnId,
        outcome: summarizeTurnOutcome(outcome),
        toolCallsMade: outcome.toolCallsMade,
        durationMs: input.durationMs,
      });
      // A channel's turn that asked for approval gets its gate now, before the channel shows the outcome
      // (mission step turns are gated by their own mission: their ids do not start with `turn/`).
      if (outcome.status === 'Escalated' && deps.confirmations && isChannelTurn(request.turnId)) {
        const { gateId } = await deps.confirmations.open(request, outcome);
        deps.stream.publish(request.turnId, { type: 'status', text: `approval needed: gate ${gateId} (aivyx mission approve ${gateId})` });
      }
      try {
        await deps.delivery.deliver(request, outcome);
      } catch (e) {
        throw toApplicationFailure(e instanceof AivyxError ? e : new AivyxError('Channel', `delivery failed: ${errorData(e).message}`));
      }
    },
  };
}

/** The activity object a worker registers. */
export type TurnActivities = ReturnType<typeof createTurnActivities>;
