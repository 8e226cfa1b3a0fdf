/** The narrow ports the turn activities are built over (wired by the worker's composition root). */
import type { Specialist } from '../core/specialists.js';
import type { AuditEvent } from '../core/audit-events.js';
import type { AuthorityProof, AuthorityPurpose, ProofVerdict, ToolCallFacts } from '../core/authority.js';
import type { TierPolicy } from '../core/capability/tier-policy.js';
import type { HistoryEntry, TurnRequest } from '../core/channel.js';
import type { TurnOutcome } from '../core/outcomes.js';
import type { McpClassification, TaintPolicy } from '../core/taint.js';
import type { TranscriptItem } from '../core/llm.js';
import type { ToolCall } from '../core/tools.js';
import type { PriceTable, Spend, SpendBudget, TokenUsage } from '../core/spend.js';
import type { TrustedPlaces } from './taint-labels.js';
import type { ChannelEvent } from '../core/channel.js';
import type { MissionDefinition } from '../workflows/mission-messages.js';
import type { MissionScheduleSpec } from '../core/mission-spec.js';
import type { MissionEventMatch } from '../machines/index.js';
import type { MissionOwners, MissionPersonRef } from '../core/mission-owner.js';

/** Appends audit entries idempotently by key. */
export interface AuditPort {
  /** Appends `event` under `idemKey`; the same key again returns the original sequence number. */
  append(idemKey: string, event: AuditEvent): Promise<{ seq: number; duplicate: boolean }>;
}

/**
 * Makes and checks authority proofs (DESIGN.md D5). Held only by components that authenticate
 * someone (channel adapters, the REST gateway) and by the worker, never by workflow code.
 */
export interface ProofPort {
  /** A proof that `body` may be used for `purpose` under workflow `boundTo`. */
  seal(purpose: AuthorityPurpose, boundTo: string, body: unknown, opts?: { now?: number; ttlMs?: number }): AuthorityProof;
  /** Checks a proof for exactly this purpose, workflow id and body. */
  check(purpose: AuthorityPurpose, boundTo: string, body: unknown, proof: unknown, now?: number): ProofVerdict;
  /** The request with a fresh turn proof attached. */
  attest(req: TurnRequest): TurnRequest;
  /** Checks a turn request's proof against its own turn id. */
  verify(req: TurnRequest): ProofVerdict;
}

/** A claim as stored: the run that holds it and what was verified. */
export interface HeldClaim<T> {
  workflowId: string;
  runId: string;
  data: T;
}

/** What claiming found: new, already this run's (a retried activity), or another run's (a replay). */
export type ClaimResult<T> =
  { status: 'claimed'; data: T } | { status: 'held'; data: T } | { status: 'taken'; by: { workflowId: string; runId: string }; data: T };

/** Durable single-use authority (`authority_claims`): turns, missions, gates, decisions, grant uses. */
export interface ClaimPort {
  claim<T>(c: { kind: string; subject: string; workflowId: string; runId: string; data: T }): Promise<ClaimResult<T>>;
  read<T>(kind: string, subject: string): Promise<HeldClaim<T> | undefined>;
  /** Hands a claim to the next run of the same workflow (continue-as-new); false when `from` does not hold it. */
  move(kind: string, subject: string, from: { workflowId: string; runId: string }, toRunId: string): Promise<boolean>;
}

/** What a tool call's row says when `runTool` starts (an earlier attempt may have written it). */
export type ToolCallStart = { state: 'new' } | { state: 'running' } | { state: 'done'; outcome: string };

export type { ToolCallFacts };

/** The outcome recorded for a call whose row was still running when its entry had to be written. */
export const INTERRUPTED_OUTCOME = 'Unknown(interrupted before its outcome was recorded)';

/** The outcome an entry records for a call whose result could not be trusted or never came. */
export const UNVERIFIABLE_OUTCOME = 'Unknown(the result did not come from this worker)';

/** What to record for a call whose row has no outcome yet (see `ToolCallLogPort.audit`). */
export interface ToolCallEnding {
  /** An outcome runTool vouched for. */
  known?: string;
  /** For a row still running (its attempt may still be working): omitted = leave its entry owed. */
  running?: string;
  /** For a call that never wrote a row. */
  missing: string;
}

/**
 * The tool-call log (`tool_calls`): a row before the effect, the outcome after, and the `ToolCall`
 * audit entry written from the row exactly once — so bookkeeping failures never rewrite a tool's
 * real result and an effect that ran is never missing from the audit log.
 */
export interface ToolCallLogPort {
  /** Writes the row before the effect (throws when the database is down: then nothing runs). */
  begin(facts: ToolCallFacts): Promise<ToolCallStart>;
  /**
   * Records the call's outcome and appends its `ToolCall` entry once; returns what the entry
   * says. A finished row's outcome stands. Otherwise `known` is recorded; without it a running row
   * gets `running` (or stays owed: undefined is returned), and a call that never wrote a row gets
   * `missing` (its row is created finished, so a late runTool attempt finds it and runs nothing).
   */
  audit(facts: ToolCallFacts, outcome: ToolCallEnding): Promise<{ outcome: string; seq: number } | undefined>;
  /**
   * What the results already in a turn's context say about taint: `untrusted`, the labels of
   * untrusted results; `unrecorded`, the keys with no finished row (a result this worker did not
   * produce, or not yet: either way it cannot be vouched for).
   */
  contextLabels(keys: readonly string[]): Promise<ContextLabels>;
  /**
   * The untrusted sources runTool recorded for calls of `tool` with this input hash in the turns
   * `turns` name (a turn id, or the id its runs' ids extend: `<mission>/step-2` covers
   * `<mission>/step-2/run-1`): why such a call was gated (empty: it was not taint).
   */
  callTaint(turns: readonly string[], tool: string, inputHash: string): Promise<string[]>;
}

/** What the worker's own rows say about the results in a turn's context (`ToolCallLogPort.contextLabels`). */
export interface ContextLabels {
  /** Labels of untrusted results among them. */
  untrusted: string[];
  /** Keys with no finished row: results this worker did not produce (or not yet). */
  unrecorded: string[];
  /**
   * Untrusted sources the specialists read whose answers are among them (an `agent.delegate` result
   * is its child's answer): the workflow labels such an answer itself, and this is the worker's check on it.
   */
  delegated: string[];
}

/** Best-effort events from activities to the channel (seed `stream_event`). */
export interface StreamPort {
  publish(turnId: string, event: ChannelEvent): void;
  /**
   * Resolves once what was published so far has left this process (or could not: best effort, and
   * bounded). A step awaits it before it returns, so its text reaches the channel before the turn's
   * outcome can, and a worker killed before it went out has not completed the step either.
   */
  flush(): Promise<void>;
}

/** Delivers a turn's outcome to its channel (seed `finalize`); must be idempotent. */
export interface DeliveryPort {
  deliver(req: TurnRequest, outcome: TurnOutcome): Promise<void>;
}

/** A reply that could not reach its channel, kept for the owner (`aivyx inbox`). */
export interface HeldReply {
  /** Short stable id (derived from the turn id): what `aivyx inbox dismiss` takes. */
  id: string;
  turnId: string;
  /** When the turn gave up delivering (workflow time, so a retried hold writes the same row). */
  at: number;
  channel: string;
  /** Why delivery failed (the channel's error message; never the reply text). */
  reason: string;
  outcome: TurnOutcome;
}

/** The owner's inbox of undelivered replies, sealed with the session history. */
export interface InboxPort {
  /** Keeps `reply` (idempotent: the same turn again overwrites its one entry). */
  hold(reply: Omit<HeldReply, 'id'>): Promise<HeldReply>;
  /** Every held reply, oldest first. */
  list(): Promise<HeldReply[]>;
  /** Removes the entry with this id (or a unique prefix of it); false when none matches. */
  dismiss(id: string): Promise<boolean>;
}

/** A session's conversation history, kept sealed in the `sessions` domain. */
export interface SessionHistoryPort {
  /** The newest `limit` messages of a session, oldest first. */
  load(sessionKey: string, limit: number): Promise<HistoryEntry[]>;
  /** Records one turn's exchange; recording the same turn again overwrites it (idempotent). */
  record(sessionKey: string, turn: { turnId: string; receivedAt: number; entries: HistoryEntry[] }): Promise<void>;
  /** The session's summary and every turn after it, oldest first (the token window's input; activities/llm/history-window.ts). */
  loadTurns?(sessionKey: string): Promise<StoredHistory>;
  /** Replaces the session's summary (compaction); `load` and `loadTurns` then skip the turns it stands for. */
  saveSummary?(sessionKey: string, summary: HistorySummary): Promise<void>;
}

/** One turn's entries as stored, with the key that orders them. */
export interface StoredTurn {
  key: string;
  entries: HistoryEntry[];
}

/** A compacted span of a session: one entry standing for every turn up to and including `through`. */
export interface HistorySummary {
  through: string;
  /** A `user` entry; `untrusted` names the sources of everything it summarises (core/taint.ts flatLabel). */
  entry: HistoryEntry;
}

/** A session's history as the token window reads it. */
export interface StoredHistory {
  summary?: HistorySummary;
  turns: StoredTurn[];
}

/** A channel turn that ended `Escalated`, as the confirmation port receives it. */
export type EscalatedOutcome = Extract<TurnOutcome, { status: 'Escalated' }>;

/**
 * Opens a gate for the pending call of a channel turn that ended `Escalated` (confirm-first in a
 * plain conversation): a confirmation mission. Idempotent per turn id.
 */
export interface ConfirmationPort {
  /** Opens (or finds) the gate, asking `gate.approvers`; resolves with its id. */
  open(req: TurnRequest, outcome: EscalatedOutcome, gate: ConfirmationGate): Promise<{ gateId: string }>;
}

/** Who decides a confirmation gate, as the worker decided it from its own records (core/gate-approvers.ts). */
export interface ConfirmationGate {
  approvers: MissionPersonRef[];
  /** The untrusted sources the call followed (empty: a confirm-first call on an untainted turn). */
  taintedBy: string[];
}

/** Starts a mission the worker vouches for (a `mission.create` call a person approved). */
export interface MissionStartPort {
  /** Starts `def` attested by the worker; a second start of the same id is a no-op (a retried call). */
  start(def: MissionDefinition): Promise<void>;
  /** Creates the Schedule of a recurring mission (`def` is its template); a second create of the same id is a no-op. */
  schedule(def: MissionDefinition, when: MissionScheduleSpec): Promise<void>;
}

/** One mission as `mission.list`, Telegram `/missions` and the e-mail `missions` command see it. */
export interface MissionRecord {
  missionId: string;
  goal: string;
  /** The Temporal status of its current run: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED… */
  status: string;
  /** Its dashboard state (running, waiting, completed, …), when the server keeps it. */
  state?: string;
  /** What a running mission waits for: a timer (`until …`) or its open gate. */
  waiting?: string;
  startedAt: string;
  /** Who it belongs to, from its definition — only a definition whose proof the worker's key checks. */
  owners: MissionOwners;
  /** Where the untrusted content came from that its asking turn had read (its goal may be that content's words). */
  taintedBy?: string[];
}

/**
 * Missions that exist, for the tools and channels that act for a person (activities/owned-missions.ts
 * decides whose they are). Implemented over the Temporal client by channels/mission-gateway.ts.
 */
export interface MissionControlPort {
  /** Missions newest first whose owners `where` accepts, at most `limit` (and `state` only, if given). */
  records(opts: { state?: string; limit: number; where: (owners: MissionOwners) => boolean }): Promise<MissionRecord[]>;
  /** One mission, or undefined: none, or none with a definition the worker's key vouches for. */
  record(missionId: string): Promise<MissionRecord | undefined>;
  /** Cancels it (its open gate is withdrawn); the mission ends as `cancelled`. */
  cancel(missionId: string, reason?: string): Promise<void>;
}

/** One recurring mission (a Schedule), as `/missions` shows it. */
export interface ScheduleRecord {
  scheduleId: string;
  goal: string;
  paused: boolean;
  /** Its next run, while not paused. */
  next?: string;
  /** Who it belongs to, from its template — only a template whose proof the worker's key checks. */
  owners: MissionOwners;
}

/** Recurring missions, for the channels that let a person pause and resume their own (activities/owned-missions.ts). */
export interface ScheduleControlPort {
  /** Schedules whose owners `where` accepts, at most `limit`. */
  scheduleRecords(opts: { limit: number; where: (owners: MissionOwners) => boolean }): Promise<ScheduleRecord[]>;
  /** One schedule, or undefined: none, or none with a template the worker's key vouches for. */
  scheduleRecord(scheduleId: string): Promise<ScheduleRecord | undefined>;
  /** Pauses or resumes it (its runs so far are untouched). */
  scheduleAction(scheduleId: string, action: 'pause' | 'resume'): Promise<unknown>;
}

/** What the agent itself holds, before a tier ceiling narrows it. */
export interface AgentConfig {
  /** The agent's capability set (scope strings). */
  capabilities: string[];
  /** The turn budget: past it the turn ends `TimedOut` (seed: budget lives in the agent's config). */
  budgetMs: number;
  /** Tools that return `RequiresEscalation` instead of running (confirm-first). */
  confirmFirst: string[];
  /** The operator's qualifiers for the SemiTrusted ▲ ceiling entries; without it those bases are absent. */
  tierPolicy?: TierPolicy;
  /** What a turn that read untrusted content does with each effect or egress tool (default: gate); `AIVYX_TAINT_POLICY`. */
  taintPolicy?: TaintPolicy;
  /** The owner's own files and vouched-for MCP servers: their results do not taint a turn. */
  trustedPlaces?: TrustedPlaces;
  /** The task queue host-bound tools run on (AIVYX_HOST_QUEUE): openTurn tells the workflow. */
  hostQueue?: string;
  /** Model prices by price-table key (AIVYX_PRICES); a model not in it counts tokens only. */
  prices?: PriceTable;
  /** Spend budgets (docs/BUDGETS.md): per turn, per session and UTC day, and a mission's default. */
  spendBudgets?: SpendBudgets;
  /**
   * Tools (or `mcp.call:<server>`) whose untrusted results the model is shown as they are
   * (`AIVYX_SHOW_UNTRUSTED`); every other untrusted result is held as a value (core/values.ts).
   */
  showUntrusted?: string[];
  /** How the owner classified MCP tools: reads, or which arguments carry only content (`AIVYX_MCP_TOOLS`). */
  mcpTools?: McpClassification;
  /** Tokens the history and the new message may take in one prompt (default DEFAULT_HISTORY_TOKENS); older turns are compacted. */
  historyTokens?: number;
  /** The owner's IANA time zone, for the date and time each turn is told (default: the worker's). */
  timeZone?: string;
  /** The specialists a lead may delegate to (`AIVYX_SPECIALISTS`; core/specialists.ts); none: `agent.delegate` finds no one. */
  specialists?: Specialist[];
}

/** The worker's spend budgets; an absent one is no limit. */
export interface SpendBudgets {
  turn?: SpendBudget;
  sessionDay?: SpendBudget;
  /** For missions whose definition names no budget of its own. */
  mission?: SpendBudget;
}

/** What a model was called for: a turn's model step, or a quarantined read (`value.read`) of one of its calls. */
export type SpendKind = 'step' | 'quarantined-read';

/** One call of a model's spend, as `llmStep` (a step) or `runTool` (a tool's own model call) records it. */
export interface SpendRecord {
  turnId: string;
  /** The turn's run and the activity's attempt: each call of the model is counted, a retry or a reset too. */
  runId: string;
  attempt: number;
  /** The model step; a tool's call is counted at the step that proposed it. */
  step: number;
  /** Default `step`. */
  kind?: SpendKind;
  /** The tool call that asked the model (absent for a step). */
  callId?: string;
  sessionKey: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  model: string;
  usage: TokenUsage;
  costUsd?: number;
}

/** The worker's own record of what calls of a model spent: a row per call, run and attempt (the same attempt recording again overwrites). */
export interface SpendLedgerPort {
  record(r: SpendRecord): Promise<void>;
  /** What a session's calls spent on `day`. */
  dayTotal(sessionKey: string, day: string): Promise<Spend>;
  /** What a turn's calls before `beforeStep` spent (its steps and their calls' reads). */
  turnTotal(turnId: string, beforeStep: number): Promise<Spend>;
  /** What tool call `callId` of step `step`, in run `runId` of the turn, spent over all its attempts. */
  callTotal(call: { turnId: string; runId: string; step: number; callId: string }): Promise<Spend>;
}

/**
 * How a tool that asks a model itself (`value.read`'s quarantined reader) spends for its turn: the
 * worker's check of the turn's and the session's day's budgets before the call, and the call's usage
 * after it, recorded in the ledger against the turn (docs/BUDGETS.md).
 */
export interface SpendMeter {
  /** Refuses (`CapabilityDenied`) when the worker's ledger says the turn or the session's day has used its budget up. */
  allow(): Promise<void>;
  /** Notes what one call of model `model` (its price-table key) used. */
  charge(kind: SpendKind, model: string, usage: TokenUsage): void;
}

/**
 * A mission's open wait as channel adapters find it: an index, not authority (the worker re-checks
 * every event against its verified definition, so a forged row only misroutes an event it refuses).
 */
export interface MissionWait {
  waitKey: string;
  missionId: string;
  step: number;
  match: MissionEventMatch;
  /** Epoch ms when the wait times out. */
  until: number;
  /** Epoch ms when it opened (a message sent before it is not its event). */
  since?: number;
}

/** The index of open waits (written by the worker, read by channel adapters). */
export interface MissionWaitsPort {
  open(wait: MissionWait): Promise<void>;
  close(waitKey: string): Promise<void>;
  list(source: MissionEventMatch['source']): Promise<MissionWait[]>;
}

/** An untrusted result the worker holds for a turn (core/values.ts). */
export interface HeldValue {
  id: string;
  /** The turn (workflow id) and call that read it: only that turn, or a turn continuing it, may use it. */
  turnId: string;
  idemKey: string;
  /** Its source label, flat ("a page from evil.example"). */
  label: string;
  body: unknown;
  /** Epoch ms after which it can no longer be used. */
  expiresAt: number;
}

/** Where held values live (sealed, like the session history). */
export interface ValueStorePort {
  /** Stores `v` under its id; the same id again (a retried activity) keeps the first. */
  put(v: HeldValue): Promise<void>;
  get(id: string): Promise<HeldValue | undefined>;
}

/**
 * What an escalated turn leaves for the turn that runs its call once a person approves it: the
 * transcript through the step that proposed the call (that batch's other results included), the
 * call itself, and what the turn's taint decisions rest on. Written by finalizeTurn for a verified
 * turn and a call its own model step proposed; read once, by openTurn of an attested rerun.
 */
export interface ResumeRecord {
  /** The escalated turn (its workflow id) and the run that escalated. */
  turnId: string;
  runId: string;
  /** The model step whose batch holds the pending call (the rerun's model continues after it). */
  step: number;
  call: ToolCall;
  /** That step's other calls that asked for a person too (each proved to come from that run's step). */
  alsoAsked?: ToolCall[];
  transcript: TranscriptItem[];
  /** Keys of every call whose result is in the transcript (runTool re-reads their labels). */
  context: string[];
  /** Untrusted sources in the turn's context (core/taint.ts). */
  taint: string[];
  /** Trusted reads' outputs: destinations they name count as the owner's (core/taint.ts). */
  trusted: string[];
  /** A specialist's turn escalated: who it ran as, from its verified claim (the approved rerun runs as it). */
  specialist?: ResumedSpecialist;
}

/** The specialist an escalated turn ran as, kept (sealed, by the worker) for the approved rerun. */
export interface ResumedSpecialist {
  name: string;
  /** The lead turn that delegated it (the rerun's `TurnStarted` names it). */
  leadTurnId: string;
  /** The set the specialist held: the rerun holds no more. */
  effective: string[];
  /** Its budget slice: the rerun's spend limit. */
  spendLimit?: SpendBudget;
}

/** Resume records, sealed in the worker's store (infra/resume-records.ts). */
export interface ResumeRecordPort {
  /** Stores the record of `record.turnId` (a retried finalizeTurn writes the same record again). */
  save(record: ResumeRecord): Promise<void>;
  /** The record an escalated turn left, if any. */
  load(turnId: string): Promise<ResumeRecord | undefined>;
}
