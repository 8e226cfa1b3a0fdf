/** What a channel tells the core about itself, and the turn request it sends (seed D3 `ChannelContext`). */
import type { AttachmentRef } from './attachments.js';
import type { AuthorityProof } from './authority.js';
import type { TrustTier } from './capability/index.js';
import type { Message } from './message.js';
import type { TurnOutcome } from './outcomes.js';
import type { SpendBudget } from './spend.js';

/** Platforms a channel can run on (seed D3 `ChannelPlatform`; `Custom` for a channel the seed does not name). */
export type ChannelPlatform = 'Local' | 'Rest' | 'Telegram' | 'Email' | 'Discord' | 'Slack' | 'Matrix' | 'Custom';

/** Facts about the inbound channel, attested by the adapter that received the message. */
export interface ChannelFacts {
  /** Channel instance name, e.g. `cli`, `rest`, `telegram`. */
  name: string;
  platform: ChannelPlatform;
  /** Resolved by the adapter from verified transport facts, never from message text. */
  trustTier: TrustTier;
  sessionId: string;
  /** Platform identity of the sender (user id, address); used for approvals. */
  sender: string;
}

/** Everything a turn needs, as sent by a channel adapter to `turnWorkflow`. */
export interface TurnRequest {
  turnId: string;
  message: Message;
  channel: ChannelFacts;
  /** The turn proof (purpose `turn`, bound to `turnId`): made by the channel adapter, or by the worker for a mission step. */
  attestation?: AuthorityProof;
  /** A mission gate's approval: lets exactly one call of `tool` with exactly `inputHash` skip confirm-first. Attested. */
  oneShotGrant?: OneShotGrant;
  /** Attenuates the turn's effective set further (a mission's capability set): effective = agent ∩ tier ceiling ∩ this. Attested. */
  capabilityLimit?: string[];
  /**
   * Where the channel wants the final reply delivered (chat id, thread headers…), opaque to the
   * core: when present the turn ends with a `deliverReply` activity for `channel.name`. Attested.
   */
  replyRoute?: ReplyRoute;
  /**
   * The escalated turn whose approved call this turn runs first, continuing from that turn's
   * transcript instead of planning afresh (the worker's resume record). Set only by the worker,
   * beside the one-shot grant for that call. Attested.
   */
  resumeFrom?: string;
  /** The lead turn whose `agent.delegate` call this specialist's turn answers (core/specialists.ts). Set only by the worker. Attested. */
  delegatedBy?: Delegation;
  /** The specialist's budget slice: the turn's spend budget is the tighter of this and the worker's. Attested. */
  spendLimit?: SpendBudget;
}

/** Who delegated a specialist's turn: the lead turn, the specialist, and the untrusted content the lead had read by then. */
export interface Delegation {
  parentTurnId: string;
  specialist: string;
  /** The lead's taint when it asked: the task it wrote may carry it, so the child starts tainted by it. */
  taint?: string[];
}

/** A channel's own address for a turn's reply (e.g. `{ chatId, replyTo }`, `{ to, inReplyTo }`). */
export type ReplyRoute = Record<string, string | number | boolean | string[]>;

/** A one-shot capability a mission gate grants to the rerun of its step (see docs/MISSIONS.md). */
export interface OneShotGrant {
  /** The mission whose gate was approved: the grant is usable only by that mission's step turns. */
  missionId: string;
  gateId: string;
  tool: string;
  inputHash: string;
}

/** One earlier message of a session, as the LLM step loads it from the sealed `sessions` domain. */
export interface HistoryEntry {
  role: 'user' | 'assistant';
  text: string;
  /** Set when the turn that wrote this had untrusted content in its context: where it came from (core/taint.ts). */
  untrusted?: string;
}

/** Owned form of seed D3 `StreamEvent`: best-effort events from activities to the channel. */
export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'status'; text: string }
  | { type: 'tool_started'; tool: string; callId: string }
  | { type: 'tool_finished'; tool: string; callId: string; summary: string }
  /** A file the turn hands over (`files.attach`): the handle only; the bytes stay sealed (core/attachments.ts). */
  | { type: 'attachment'; attachment: AttachmentRef }
  /** An LLM step was retried: text already shown for it should be discarded. */
  | { type: 'step_restarted'; step: number };

/** What a channel hears about a turn: stream events, then exactly one `final`. */
export type ChannelEvent = StreamEvent | { type: 'final'; outcome: TurnOutcome };
