/**
 * Audit events (seed D4 "mixed model"). Every event is self-contained: readable without
 * cross-referencing others. Raw tool inputs never appear: only `inputHash`, the SHA-256
 * of the RFC 8785 canonical JSON of the input.
 */
import type { ChannelPlatform } from './channel.js';
import type { TrustTier } from './capability/index.js';

/** Memory operation kinds for the dedicated `MemoryAccess` view. */
export type MemoryOperation = 'Read' | 'Write' | 'Forget';

/** One auditable event. `type` names the kind; mission and gate kinds are added by the missions issue. */
/** What `GateApproved` and `GateDenied` record: who decided which gate, and a hash of their reason (never its text). */
export interface GateDecisionFields {
  turnId: string;
  missionId: string;
  gateId: string;
  approver: string;
  approverChannel: string;
  approverTier: TrustTier;
  reasonHash?: string;
}

export type AuditEvent =
  | {
      type: 'TurnStarted';
      turnId: string;
      sessionId: string;
      channel: ChannelPlatform;
      channelName: string;
      trustTier: TrustTier;
      effectiveCapabilities: string[];
      /** A specialist's turn (core/specialists.ts): the lead turn that delegated it, and which specialist it is. */
      parentTurnId?: string;
      specialist?: string;
    }
  | {
      /** A turn request failed its channel attestation; no LLM call was made. */
      type: 'TurnRejected';
      turnId: string;
      sessionId: string;
      channel: ChannelPlatform;
      channelName: string;
      claimedTrustTier: string;
      reason: string;
    }
  | {
      type: 'ToolCall';
      turnId: string;
      callId: string;
      toolId: string;
      scopeUsed: string;
      inputHash: string;
      outcome: string;
      durationMs: number;
      /** Present when the call was made after untrusted content: where that content came from. */
      taintedBy?: string[];
    }
  | {
      /** A workflow input the worker refused before acting on it: not encrypted, copied from another workflow, or malformed. */
      type: 'InputRefused';
      /** The workflow it was sent to (indexed like a turn). */
      turnId: string;
      workflowType: string;
      what: string;
      reason: string;
    }
  | {
      /** A tool call refused before it could run: not produced by this turn's model step, or the turn's authority was not verified in this run. */
      type: 'ToolCallRejected';
      turnId: string;
      callId: string;
      toolId: string;
      reason: string;
    }
  | {
      type: 'ScopeDenied';
      turnId: string;
      callId: string;
      toolAttempted: string;
      scopeRequested: string;
      scopeQualifier: string | null;
      heldCapabilities: string[];
    }
  | ({
      type: 'TurnEnded';
      turnId: string;
      outcome: string;
      toolCallsMade: number;
      durationMs: number;
    } & Partial<SpendTotals>)
  | {
      type: 'MemoryAccess';
      turnId: string;
      operation: MemoryOperation;
      scope: string;
      queryOrKey: string;
    }
  // Mission and gate transitions (docs/MISSIONS.md). `turnId` is the mission id so a mission's entries index together;
  // `afterMs` is workflow time since the gate opened (the durable timer that fired).
  // `goalHash`/`reasonHash`: SHA-256 of a person's text, never the text (the audit log holds no user text).
  | {
      type: 'MissionStarted';
      turnId: string;
      missionId: string;
      goalHash: string;
      stepCount: number;
      trustTier: TrustTier;
      channelName: string;
      capabilities: string[];
    }
  /** A mission whose definition (or continuation) did not verify: nothing of it ran. */
  | { type: 'MissionRejected'; turnId: string; missionId: string; reason: string }
  | { type: 'MissionStepFinished'; turnId: string; missionId: string; step: number; attempt: number; stepTurnId: string; outcome: string }
  | {
      /** A result of one of the turn's activities the worker refused (a completion forged at the frontend); the step was asked again. */
      type: 'ResultRefused';
      turnId: string;
      activity: string;
      step: number;
      attempt: number;
      reason: string;
    }
  | {
      type: 'GateOpened';
      turnId: string;
      missionId: string;
      gateId: string;
      step: number;
      tool: string;
      inputHash: string;
      approvers: string[];
      /** The untrusted sources the call followed: why only owners were asked (absent: a confirm-first gate). */
      taintedBy?: string[];
    }
  | { type: 'GateReminded'; turnId: string; missionId: string; gateId: string; afterMs: number }
  | { type: 'GateEscalated'; turnId: string; missionId: string; gateId: string; approvers: string[]; afterMs: number }
  | ({ type: 'GateApproved' } & GateDecisionFields)
  | ({ type: 'GateDenied' } & GateDecisionFields)
  /** A gate decision that did not verify (forged, expired, for another gate, from someone not asked, or too late): the gate did not move. */
  | {
      type: 'GateDecisionRejected';
      turnId: string;
      missionId: string;
      gateId: string;
      decision: string;
      claimedApprover: string;
      claimedChannel: string;
      reason: string;
    }
  | { type: 'GateExpired'; turnId: string; missionId: string; gateId: string; afterMs: number }
  | { type: 'GateWithdrawn'; turnId: string; missionId: string; gateId: string }
  /** An inbound event ended a `waitFor` step: who sent it as the adapter authenticated them, never its text. */
  | { type: 'MissionEventReceived'; turnId: string; missionId: string; waitKey: string; source: string; from: string; eventId: string }
  /** An event sent to a wait that did not verify or did not match: the wait goes on. */
  | { type: 'MissionEventRejected'; turnId: string; missionId: string; waitKey: string; reason: string }
  /** An approver raised a mission's spend budget at its budget gate (docs/BUDGETS.md). */
  | {
      type: 'MissionBudgetRaised';
      turnId: string;
      missionId: string;
      gateId: string;
      fromTokens?: number;
      toTokens?: number;
      fromCostUsd?: number;
      toCostUsd?: number;
    }
  /**
   * A person cleared a conversation (`/clear`): the session's history is gone, so its next turn starts
   * with no earlier context (and no taint from it). Who and which session; never any text.
   */
  | {
      type: 'SessionCleared';
      /** The session workflow id (`session/<channel>/<session id>`), indexed like a turn. */
      turnId: string;
      sessionId: string;
      channel: ChannelPlatform;
      channelName: string;
      /** The sender as the channel authenticated them (a Telegram user id, a verified From address, `local-user`). */
      clearedBy: string;
      trustTier: TrustTier;
    }
  /**
   * The owner changed what the assistant learned (issue 35): retired a skill (every version), or added
   * a predicate to the graph's vocabulary. Indexed under `owner/skills`; who, on which channel.
   */
  | {
      type: 'OwnerSkillsChanged';
      turnId: string;
      /** `edit`: an owner's new version, opened for approval (stored only once approved at its gate). */
      action: 'retire' | 'add-predicate' | 'edit';
      /** The skill's name or the predicate (identifiers the owner chose, never free text). */
      subject: string;
      /** Versions retired; for an edit, the version it becomes once approved. */
      versions?: number;
      by: string;
      channel: string;
    }
  /**
   * The owner stopped one running specialist (`aivyx specialists stop`, issue 33): written before the
   * child is cancelled, under the child's turn id. Who, on which channel, at which tier.
   */
  | {
      type: 'SpecialistStopped';
      /** The child turn's workflow id. */
      turnId: string;
      parentTurnId: string;
      specialist: string;
      by: string;
      channel: string;
      trustTier: TrustTier;
    }
  | ({ type: 'MissionEnded'; turnId: string; missionId: string; state: string; reason?: string } & Partial<SpendTotals>);

/** What model steps spent, as `TurnEnded` and `MissionEnded` record it (absent when nothing was reported). */
export interface SpendTotals {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** US dollars of the steps whose model has a price. */
  costUsd?: number;
}

/** The `type` names of audit events. */
export type AuditEventType = AuditEvent['type'];

/**
 * Timings a workflow measures when it writes an entry through a local activity (docs/IDEMPOTENCY.md):
 * a local activity that runs again after a crash or an eviction measures them again, so they are not
 * part of the entry's identity under its key — the first one written stays. Every other field is.
 */
const MEASURED: Partial<Record<AuditEvent['type'], readonly string[]>> = {
  TurnEnded: ['durationMs'],
};

/** The entry's identity: the event without the timings its writer measured. */
export function auditIdentity(event: AuditEvent): Record<string, unknown> {
  const measured = MEASURED[event.type];
  if (!measured) return event as unknown as Record<string, unknown>;
  return Object.fromEntries(Object.entries(event).filter(([k]) => !measured.includes(k)));
}
