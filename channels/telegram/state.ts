/**
 * The Telegram channel's records in the sealed `channel_state` domain, shared by the adapter
 * (which writes them as messages arrive) and the deliverer (which reads them in the worker's
 * delivery activities; in `aivyx up` both live in one process).
 *
 *   offset/<botId>             {next}: the first update id not yet ingested (polling mode)
 *   turn/<turnId>              TurnRecord: chat, sender, facts, streamed message id (+ message until delivered)
 *   chat/<chatId>              {open: turnId[]}: turns of the chat not yet answered (/status, /cancel)
 *   tg-outbox/<idemKey>/<i>    at-most-once sends (infra/outbox.ts), keyed by the delivery activity's key
 *   tg-gate/<gateId>           {messages}: the approval requests sent for a gate (to remove their buttons)
 *   tg-open/<userId>           {gates}: gates this user was asked about and that have not closed (/status)
 *   gate-token/<ref>           GateTokens records (infra/gate-tokens.ts)
 */
import type { ChannelFacts } from '../../core/channel.js';
import type { Message } from '../../core/message.js';
import type { DomainHandle } from '../../infra/storage/index.js';

/** What the adapter knows about a turn it started. */
export interface TurnRecord {
  chatId: number;
  replyTo: number;
  sender: string;
  facts: ChannelFacts;
  /** Dropped once delivered (it may hold image bytes). */
  message?: Message;
  streamMessageId?: number;
  /** The final reply is being delivered: the streamed view (maybe in another process) edits no more. */
  final?: boolean;
  delivered?: boolean;
}

/** Open turns of one chat. */
export interface ChatState {
  open: string[];
}

/** Approval requests sent for one gate. */
export interface GateMessages {
  messages: { chatId: number; messageId: number }[];
}

/** Gates a user was asked to decide and that have not closed yet (written by the deliverer). */
export interface OpenGates {
  gates: { gateId: string; missionId: string; tool: string; digest: string }[];
}

/** Key of a user's open gates. */
export const openGatesKey = (userId: string): string => `tg-open/${userId}`;
/** Key of a turn record. */
export const turnKey = (turnId: string): string => `turn/${turnId}`;
/** Key of a gate's sent requests. */
export const gateKey = (gateId: string): string => `tg-gate/${gateId}`;
/** Outbox prefix of the Telegram deliverer. */
export const OUTBOX_PREFIX = 'tg-outbox';

/** Read-modify-write of a chat's open turns (one writer per chat in practice: its adapter and deliverer). */
export async function updateChat(store: DomainHandle, chatId: number, f: (s: ChatState) => ChatState): Promise<void> {
  const key = `chat/${chatId}`;
  const s = (await store.getJson<ChatState>(key)) ?? { open: [] };
  await store.putJson(key, f(s));
}

/** Marks a turn answered: drops its message, sets `delivered`, removes it from the chat's open turns. */
export async function markDelivered(store: DomainHandle, turnId: string, rec: TurnRecord): Promise<void> {
  const { message: _dropped, ...rest } = rec;
  await store.putJson(turnKey(turnId), { ...rest, delivered: true } satisfies TurnRecord);
  await updateChat(store, rec.chatId, (s) => ({ open: s.open.filter((t) => t !== turnId) }));
}
