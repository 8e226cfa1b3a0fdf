/** The narrow ports the turn activities are built over (wired by the worker's composition root). */
import type { AuditEvent } from '../core/audit-events.js';
import type { TierPolicy } from '../core/capability/tier-policy.js';
import type { HistoryEntry, TurnRequest } from '../core/channel.js';
import type { TurnOutcome } from '../core/outcomes.js';
import type { ChannelEvent } from '../infra/stream-hub.js';

/** Appends audit entries idempotently by key. */
export interface AuditPort {
  /** Appends `event` under `idemKey`; the same key again returns the original sequence number. */
  append(idemKey: string, event: AuditEvent): Promise<{ seq: number; duplicate: boolean }>;
  /** True when an entry with this key exists (a retried activity whose first attempt already audited). */
  has(idemKey: string): Promise<boolean>;
}

/** Verifies channel attestations. */
export interface AttestationPort {
  verify(req: TurnRequest): { ok: true } | { ok: false; reason: string };
}

/** Best-effort events from activities to the channel (seed `stream_event`). */
export interface StreamPort {
  publish(turnId: string, event: ChannelEvent): void;
}

/** Delivers a turn's outcome to its channel (seed `finalize`); must be idempotent. */
export interface DeliveryPort {
  deliver(req: TurnRequest, outcome: TurnOutcome): Promise<void>;
}

/** A session's conversation history, kept sealed in the `sessions` domain. */
export interface SessionHistoryPort {
  /** The newest `limit` messages of a session, oldest first. */
  load(sessionKey: string, limit: number): Promise<HistoryEntry[]>;
  /** Records one turn's exchange; recording the same turn again overwrites it (idempotent). */
  record(sessionKey: string, turn: { turnId: string; receivedAt: number; entries: HistoryEntry[] }): Promise<void>;
}

/** A channel turn that ended `Escalated`, as the confirmation port receives it. */
export type EscalatedOutcome = Extract<TurnOutcome, { status: 'Escalated' }>;

/**
 * Opens a gate for the pending call of a channel turn that ended `Escalated` (confirm-first in a
 * plain conversation): a confirmation mission. Idempotent per turn id.
 */
export interface ConfirmationPort {
  /** Opens (or finds) the gate; resolves with its id. */
  open(req: TurnRequest, outcome: EscalatedOutcome): Promise<{ gateId: string }>;
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
}
