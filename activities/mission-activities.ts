/**
 * The mission workflow's activities: attesting its step turns, hashing a pending call's input,
 * auditing mission and gate transitions, and telling approvers. All idempotent: audit appends
 * are keyed by `activityKey()`, notifications are best-effort and deduplicated by the notifier.
 */
import type { AuditEvent } from '../core/audit-events.js';
import type { TurnRequest } from '../core/channel.js';
import type { Attestor } from '../infra/attestation.js';
import type { ChannelEvent } from '../infra/stream-hub.js';
import { activityKey, inputHash } from './turn-activities.js';
import type { AuditPort } from './ports.js';

/** Who is told about a gate. */
export interface MissionNotice {
  missionId: string;
  gateId: string;
  kind: 'opened' | 'reminder' | 'escalated' | 'withdrawn' | 'decided' | 'expired';
  approvers: { identity: string; channel: string }[];
  text: string;
  /** What the gate is about, for channels that show a full request (Telegram, email). */
  goal?: string;
  tool?: string;
  /** SHA-256 of the pending call's canonical input (its digest, never the input). */
  inputHash?: string;
  /** Why the call needs approval (the tool's escalation reason). */
  why?: string;
  /** Epoch ms when the gate expires. */
  deadline?: number;
  /** The pending call as `describeCall` renders it (canonical input, secrets redacted, long values cut). */
  call?: string[];
  /** Who asked for the call, on which channel (the mission's channel facts). */
  askedBy?: { identity: string; channel: string };
}

/** Tells approvers about a gate (see `routingMissionNotifier`). Must tolerate repeats of one `idemKey`. */
export interface MissionNotifier {
  notify(notice: MissionNotice, idemKey: string): Promise<void>;
}

/** The mission audit events (the mission kinds of `AuditEvent`). */
export type MissionAuditEvent = Extract<AuditEvent, { missionId: string }>;

/** Everything the mission activities need. */
export interface MissionActivityDeps {
  audit: AuditPort;
  /** Holds the attestation key: mission-started turns are attested here, never by the workflow. */
  attestor: Attestor;
  notifier: MissionNotifier;
}

/** A notifier that publishes notices on a stream (the StreamHub's `publish`), keyed by mission id. */
export function streamMissionNotifier(publish: (key: string, event: ChannelEvent) => void): MissionNotifier {
  return {
    async notify(notice) {
      publish(notice.missionId, { type: 'status', text: `[gate ${notice.gateId}] ${notice.kind}: ${notice.text} → ${notice.approvers.map((a) => `${a.identity}@${a.channel}`).join(', ')}` });
    },
  };
}

/** Builds the mission activities. */
export function createMissionActivities(deps: MissionActivityDeps) {
  return {
    /** Attests a step turn request built by the mission workflow (including its one-shot grant). */
    async attestStepTurn(req: TurnRequest): Promise<TurnRequest> {
      return deps.attestor.attest(req);
    },
    /** The input hash a gate is bound to (SHA-256 of the canonical JSON; the workflow has no crypto). */
    async hashToolInput(input: unknown): Promise<string> {
      return inputHash(input);
    },
    /** Appends one mission or gate transition to the audit log, idempotently. */
    async recordMissionEvent(event: MissionAuditEvent): Promise<void> {
      await deps.audit.append(activityKey(), event);
    },
    /** Tells a gate's approvers (opened, reminder, escalation, withdrawal). */
    async notifyApprovers(notice: MissionNotice): Promise<void> {
      await deps.notifier.notify(notice, activityKey());
    },
  };
}

/** The activity object a worker registers for missions. */
export type MissionActivities = ReturnType<typeof createMissionActivities>;
