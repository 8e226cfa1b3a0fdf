/** The turn activities' inputs, results and dependencies: what the workflow and the worker share. */
import type { AuthorityProof } from '../../core/authority.js';
import type { TrustTier } from '../../core/capability/index.js';
import type { ChannelFacts, OneShotGrant, ReplyRoute, TurnRequest } from '../../core/channel.js';
import type { AivyxErrorData } from '../../core/errors.js';
import type { ToolOutcome, TurnOutcome } from '../../core/outcomes.js';
import type { Spend, SpendBudget } from '../../core/spend.js';
import type { CallTaint, McpClassification, TaintPolicy } from '../../core/taint.js';
import type { TranscriptItem } from '../../core/llm.js';
import type { ToolCall } from '../../core/tools.js';
import type { McpTierGrants } from '../../core/tools/mcp-tools.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { McpClientPool } from '../mcp/mcp-client.js';
import type {
  AgentConfig,
  AuditPort,
  ClaimPort,
  ConfirmationPort,
  DeliveryPort,
  ProofPort,
  ResumeRecordPort,
  SessionHistoryPort,
  SpendLedgerPort,
  StreamPort,
  ToolCallFacts,
  ToolCallLogPort,
  ValueStorePort,
} from '../ports.js';
import type { ToolImplementation } from '../tools/tool-implementation.js';

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
  /** The models of specialists that name one (`model` in AIVYX_SPECIALISTS), by specialist name; the rest ask `llm`. */
  specialistLlms?: ReadonlyMap<string, LlmProvider>;
  tools: readonly ToolImplementation[];
  /** Configured MCP servers and the tiers an operator opted in to them (granted to no tier by default). */
  mcp?: {
    pool: McpClientPool;
    tierGrants: McpTierGrants;
    /** Servers whose own read-only declarations the owner believes (AIVYX_MCP_TRUST_HINTS). */
    trustHints?: readonly string[];
  };
  /** Opens a confirmation gate when a channel turn ends `Escalated`; without it such a turn just ends. */
  confirmations?: ConfirmationPort;
  /** Where `llmStep` records each step's spend, `runTool` a quarantined read's, and `openTurn` reads a session's day; none: no session-day budget. */
  spend?: SpendLedgerPort;
  /** Where untrusted results are held as values (core/values.ts); none: they are shown to the model, and taint it. */
  values?: ValueStorePort;
  /** The clock values expire by (tests move it). */
  now?: () => number;
  /** What an escalated turn leaves for the run of its approved call; none: an approval reruns the message afresh. */
  resumes?: ResumeRecordPort;
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
      /** The approved call this turn runs first, and the transcript it continues (an attested rerun only). */
      resume?: OpenedResume;
    }
  | { ok: false; error: AivyxErrorData };

/**
 * What a rerun continues from: the escalated turn's transcript through the step that proposed the
 * approved call, that call with a proof bound to this run and step (runTool runs nothing else), and
 * what the turn's taint rests on.
 */
export interface OpenedResume {
  /** The escalated turn this one continues. */
  from: string;
  step: number;
  call: ToolCall;
  callProof: AuthorityProof;
  /** The same step's other calls that asked for a person, with proofs for this run: run again, they ask next. */
  alsoAsked: { call: ToolCall; proof: AuthorityProof }[];
  transcript: TranscriptItem[];
  context: string[];
  trusted: string[];
}

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
  /** The owner's own identities from configuration (`<channel>:<sender>`): a recipient named there is the owner's. */
  owners?: string[];
  /** How the owner classified MCP tools (`AIVYX_MCP_TOOLS`); absent: none is. */
  mcpTools?: McpClassification;
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
  /** A specialist's turn (or the approved rerun of its call): which specialist (its instructions are added to every step's prompt). */
  specialist?: string;
  /** A specialist's turn: the lead turn that delegated it. */
  leadTurnId?: string;
  /** A specialist's turn: its budget slice (the worker's own model-step check uses the tighter budget). */
  spendLimit?: SpendBudget;
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

/** What `runTool` returns: the outcome, the call's facts, a receipt that lets `recordToolCall` trust both, and what it spent. */
export interface RunToolResult {
  outcome: ToolOutcome;
  facts: ToolCallFacts;
  receipt: AuthorityProof;
  /** What the call's own model calls spent, as the worker's ledger holds it (a quarantined read's); the workflow adds it to the turn's. */
  spend?: Spend;
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
  /** The same step's other calls that asked for a person too: the rerun asks for them next, without a new plan. */
  alsoAsked?: { call: ToolCall; proof?: AuthorityProof }[];
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
  /** The model's own final text, when the outcome's text had held values rendered into it: the history keeps this. */
  plannerText?: string;
  /** Keys of every call the turn scheduled (their labels are re-read here). */
  context?: string[];
  /** An escalated turn's transcript and trusted reads: kept, with its pending call, for the run of the approved call. */
  resume?: { transcript: TranscriptItem[]; trusted: string[] };
}

/** How many earlier messages of the session an LLM step sees. */
export const SESSION_HISTORY_LIMIT = 40;
