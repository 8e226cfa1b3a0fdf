/**
 * The Matrix channel's records in the sealed `channel_state` domain, shared by the adapter (which
 * writes them as events arrive) and the deliverer (which may run in a worker process).
 *
 *   mx-sync/<userId>              {since}: the sync token after the last batch fully handled
 *   mx-seen/<eventId>             {at}: an event handled (a redelivered or replayed event is skipped)
 *   turn/<turnId>                 MatrixTurnRecord: room, sender, facts, streamed event id (+ message until delivered)
 *   mx-dm/<userId>                {roomId}: the direct chat where requests and notices for a person go
 *   mx-req/<eventId>              ApprovalRequest: the token behind a request message (a reaction on it decides)
 *   mx-gate/<gateId>              {requests}: the request messages sent for a gate (edited when it closes)
 *   mx-outbox/<idemKey>/<i>       at-most-once sends (infra/outbox.ts)
 *   gate-token/<ref>              GateTokens records (infra/gate-tokens.ts)
 */
import type { ChannelFacts } from '../../core/channel.js';
import type { Message } from '../../core/message.js';
import type { DomainHandle } from '../../infra/storage/index.js';

/** What the adapter knows about a turn it started. */
export interface MatrixTurnRecord {
  roomId: string;
  /** The event the reply answers. */
  replyTo: string;
  sender: string;
  facts: ChannelFacts;
  /** Dropped once delivered. */
  message?: Message;
  streamEventId?: string;
  final?: boolean;
  delivered?: boolean;
}

/** An approval request message: which token a reaction on it spends. */
export interface ApprovalRequest {
  roomId: string;
  gateId: string;
  token: string;
}

/** The request messages of one gate. */
export interface GateRequests {
  requests: { roomId: string; eventId: string }[];
}

export const syncKey = (userId: string): string => `mx-sync/${userId}`;
export const seenKey = (eventId: string): string => `mx-seen/${eventId}`;
export const turnKey = (turnId: string): string => `turn/${turnId}`;
export const dmKey = (userId: string): string => `mx-dm/${userId}`;
export const requestKey = (eventId: string): string => `mx-req/${eventId}`;
export const gateKey = (gateId: string): string => `mx-gate/${gateId}`;
export const OUTBOX_PREFIX = 'mx-outbox';

/** Marks a turn answered: drops its message (the request text), sets `delivered`. */
export async function markDelivered(store: DomainHandle, turnId: string, rec: MatrixTurnRecord): Promise<void> {
  const { message: _dropped, ...rest } = rec;
  await store.putJson(turnKey(turnId), { ...rest, delivered: true } satisfies MatrixTurnRecord);
}
