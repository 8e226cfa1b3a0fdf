/**
 * The operations channels use, as small interfaces (ports). A channel depends on these, never on the
 * classes behind them (TurnGateway, MissionGateway, DeliveryRegistry, GateTokens): what a channel may
 * do is what its ports say, and the classes grow without every channel seeing each new method.
 *
 *   chat channels (Telegram, e-mail, `lines`)   TurnSubmitPort (+ TurnCancelPort: Telegram's /cancel;
 *                                               SessionClearPort: /clear),
 *                                               ChatMissionPort, DelivererRegistry, GateTokenPort
 *   the local REST channel                      LocalTurnPort, LocalMissionPort
 */
import type { SkillSummary, StoredSkill } from '../activities/tools/skill-port.js';
import type { ChannelDeliverer } from '../activities/delivery-activities.js';
import type { MissionControlPort, ScheduleControlPort } from '../activities/ports.js';
import type { ChannelFacts, ReplyRoute } from '../core/channel.js';
import type { Message } from '../core/message.js';
import type { TurnOutcome } from '../core/outcomes.js';
import type { GateTokenCheck, GateTokenGrant } from '../infra/gate-tokens.js';
import type { ChannelEvent } from '../infra/stream-hub.js';
import type { GateApprover } from '../machines/index.js';
import type { GateDecisionResult, MissionStatus } from '../workflows/mission-messages.js';
import type { InboundEvent } from './kit/mission-events.js';
import type { MissionSpec } from './mission-input.js';

// --- turns

/** A turn started through the gateway. */
export interface GatewayTurn {
  turnWorkflowId: string;
  duplicate: boolean;
  outcome: Promise<TurnOutcome>;
}

/** One open conversation, as `aivyx sessions` lists it. */
export interface SessionSummary {
  /** The session workflow's id: `session/<channel>/<session id>`. */
  sessionWorkflowId: string;
  startTime: string;
}

/** Inbound submission (every channel): a message with its channel facts becomes an attested turn. */
export interface TurnSubmitPort {
  /**
   * Starts a turn for `message`; `onEvent` hears stream events until the outcome. With a
   * `replyRoute` the turn itself delivers the final reply through the channel's deliverer.
   */
  start(channel: ChannelFacts, message: Message, onEvent: (e: ChannelEvent) => void, replyRoute?: ReplyRoute): Promise<GatewayTurn>;
}

/** Stops a running turn (Telegram's /cancel, REST's cancel). */
export interface TurnCancelPort {
  /** Cancels a running turn; `NotFound` when there is none of that id. */
  cancel(turnWorkflowId: string): Promise<void>;
}

/** The command every channel takes as `/clear` rather than as a message (Telegram: its `/clear` command). */
export const CLEAR_COMMAND = '/clear';

/** What `/clear` answers on every channel. */
export const SESSION_CLEARED_TEXT = 'cleared: the next message starts a new conversation';

/**
 * `/clear` (every channel): the session's context, the history its model is shown, starts empty, so
 * its next turn starts untainted unless its own message is untrusted. Memory is kept. Who may: whoever
 * the channel lets write into that session; clearing only removes context, it never adds authority.
 */
export interface SessionClearPort {
  /**
   * Clears `channel`'s session as `channel.sender` and audits it (`SessionCleared`) under `eventId`
   * (the platform's message id, so a redelivered `/clear` is audited once). Resolves with the confirmation.
   */
  clearSession(channel: ChannelFacts, eventId: string): Promise<{ text: string }>;
}

/** What a chat channel does with turns: submit them, cancel one on its sender's word, and clear its session. */
export type ChatTurnPort = TurnSubmitPort & TurnCancelPort & SessionClearPort;

/** What the local REST channel does with turns: also re-attach to one, await its outcome, list sessions. */
export interface LocalTurnPort extends ChatTurnPort {
  /** Starts a turn as `TurnSubmitPort.start`; `session` sets how a session it opens behaves (a one-shot message's closes when its turn ends). */
  start(
    channel: ChannelFacts,
    message: Message,
    onEvent: (e: ChannelEvent) => void,
    replyRoute?: ReplyRoute,
    session?: { idleMs?: number },
  ): Promise<GatewayTurn>;
  /** Turn ids that start with `prefix`, newest first: what a short turn id may mean. */
  turnsStartingWith(prefix: string, limit?: number): Promise<string[]>;
  /** Re-attaches to a turn started earlier: `onEvent` hears what it streams from now on; `NotFound` when there is none. */
  follow(turnWorkflowId: string, onEvent: (e: ChannelEvent) => void): Promise<{ status: string; outcome: Promise<TurnOutcome> }>;
  /** A turn's outcome, once it has one (also for a turn that already ended). */
  outcome(turnWorkflowId: string): Promise<TurnOutcome>;
  /** The open (Running) sessions. */
  sessions(limit?: number): Promise<SessionSummary[]>;
}

// --- missions

/** A mission's status query, with its workflow status (and result, once completed). */
export type MissionView = MissionStatus & { status: string; steps?: number; result?: unknown };

/** Gate decisions for an approver the channel verified (a Telegram user id, a DKIM/SPF-verified address). */
export interface GateDecisionPort {
  /** Decides `gateId` as `approver`; the Update validator decides whether they may (a refusal is `CapabilityDenied`). */
  decideAs(kind: 'approve' | 'deny', gateId: string, approver: GateApprover, reason?: string): Promise<GateDecisionResult>;
  /**
   * Audits a decision the channel refused itself (a button sent to someone else, "approve" without
   * the request's token) as `GateDecisionRejected`, once per `eventId`; best effort.
   */
  rejectDecision(r: {
    gateId: string;
    kind: 'approve' | 'deny';
    approver: { identity: string; channel: string };
    reason: string;
    eventId: string;
  }): Promise<void>;
}

/** Inbound messages for missions' `waitFor` steps. */
export interface MissionEventPort {
  /** Offers a message, as its channel authenticated it, to missions waiting for one; returns the missions that took it. */
  offerEvent(event: InboundEvent): Promise<string[]>;
}

/** One mission's status (Telegram's /status confirms a gate is still open). */
export interface MissionStatusPort {
  /** The mission's status query (works on a closed mission too, while its history is kept). */
  show(missionId: string): Promise<MissionView>;
}

/**
 * What a chat channel gets of missions: gate decisions, `waitFor` events, a mission's status, and a
 * sender's own missions and recurring missions (whose: activities/owned-missions.ts).
 */
export type ChatMissionPort = GateDecisionPort & MissionEventPort & MissionStatusPort & MissionControlPort & ScheduleControlPort;

/** One row of the missions list. */
export interface MissionSummary {
  missionId: string;
  status: string;
  state: string | undefined;
  openGate: string | undefined;
  startTime: string;
}

/** One recurring mission, as `schedules` lists it. */
export interface ScheduleRow {
  scheduleId: string;
  paused: boolean;
  /** The next run times (up to three; none while paused). */
  next: string[];
  lastRun?: { at: string; workflowId: string };
}

/** What the local REST channel (and through it `aivyx mission …`) does with missions, as `local-user`. */
export interface LocalMissionPort extends MissionStatusPort {
  /** Starts a mission; resolves with its id (a spec with a `schedule` is for `schedule`). */
  create(spec: MissionSpec): Promise<{ missionId: string }>;
  /** Creates a recurring mission; resolves with its schedule id. */
  schedule(spec: MissionSpec): Promise<{ scheduleId: string }>;
  /** The recurring missions. */
  schedules(limit?: number): Promise<ScheduleRow[]>;
  /** Pauses, resumes or deletes a recurring mission's schedule. */
  scheduleAction(scheduleId: string, action: 'pause' | 'resume' | 'delete'): Promise<{ scheduleId: string; state: string }>;
  /** Missions newest first; `state` filters on AivyxMissionState. */
  list(state?: string, limit?: number): Promise<MissionSummary[]>;
  /** Cancels a mission: an open gate is withdrawn. */
  cancel(missionId: string, reason?: string): Promise<void>;
  /** Approves a gate as the local user. */
  approve(gateId: string, reason?: string, missionId?: string): Promise<GateDecisionResult>;
  /** Denies a gate as the local user. */
  deny(gateId: string, reason?: string, missionId?: string): Promise<GateDecisionResult>;
}

// --- outbound and approval tokens

/** Where a channel registers its outbound side (final replies, gate notices, `channel.send`). */
export interface DelivererRegistry {
  /** Registers `deliverer` for channel `name`; returns a function that unregisters it. */
  register(name: string, deliverer: ChannelDeliverer): () => void;
}

/** MACed single-use approval tokens (infra/gate-tokens.ts): issued with a gate notice, checked and spent on an answer. */
export interface GateTokenPort {
  /** A token naming one gate and the one person on one channel it is sent to. */
  issue(grant: GateTokenGrant): Promise<string>;
  /** The grant a token carries (and whether it was used), or why it is refused. */
  check(token: string): Promise<GateTokenCheck>;
  /** Marks a token used once its decision is sent. */
  markUsed(token: string, decision: string): Promise<void>;
}

// --- the owner's own surfaces

/** The owner's view of the assistant's approved skills (app/owner-skills.ts), scope-checked like the tools. */
export interface OwnerSkillsPort {
  list(): Promise<SkillSummary[]>;
  /** NotFound when there is none; CapabilityDenied when it does not verify. */
  show(name: string): Promise<StoredSkill>;
  /** Audited as done by `by` (the person the channel authenticated). */
  retire(name: string, by: { identity: string; channel: string }): Promise<{ retired: number }>;
  /**
   * A new version by `by`: `changes` replace those parts of the latest version, and the whole skill
   * waits at an approval gate like a proposal (nothing is stored until it is approved). NotFound for
   * a retired or unknown skill.
   */
  edit(
    name: string,
    changes: { summary?: string; whenToUse?: string; steps?: string[]; tools?: string[] },
    by: { identity: string; channel: string },
    /** The asking message's platform id: a redelivered message opens the same gate once. */
    requestKey?: string,
  ): Promise<{ name: string; version: number; missionId: string; gateId: string }>;
}

/** What a channel knows of the install's owner: their identities, and what only they may see and change. */
export interface OwnerSurfaces {
  /** `<channel>:<sender>` (AIVYX_OWNER_IDS). */
  ids: readonly string[];
  skills?: OwnerSkillsPort;
}
