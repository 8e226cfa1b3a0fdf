/**
 * Matrix inbound: each timeline event is handled once (its id is recorded in sealed state, so an
 * event the homeserver sends again — a replayed sync, a restart before the sync token was stored —
 * runs nothing twice; the turn id comes from the event id too). A text message becomes a turn whose
 * reply the workflow delivers; an edit (`m.replace`) is never a new request and never changes one;
 * reactions and `!` commands go to approvals.ts. Identity is the sender's user id as the homeserver
 * set it, never a display name.
 */
import type { ChannelFacts } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { Message } from '../../core/message.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import { CLEAR_COMMAND, type MissionEventPort, type SessionClearPort, type TurnSubmitPort } from '../ports.js';
import type { createApprovals } from './approvals.js';
import { relationOf, type MatrixEvent } from './client.js';
import type { MatrixCrypto } from './crypto.js';
import { liveStream, type LiveStream, type StreamDeps } from './stream.js';
import { dmKey, markDelivered, seenKey, turnKey, type MatrixTurnRecord } from './state.js';
import { isDirect, resolveMatrixTier, type MatrixTier, type MatrixTrustPolicy } from './trust.js';

/** Channel instance name used in turn and session ids (and the delivery registry). */
export const MATRIX_CHANNEL_NAME = 'matrix';

/** The aivyx message id of a Matrix event (event ids are unique per homeserver's view of a room). */
export const matrixMessageId = (eventId: string): string => eventId;

/** What inbound needs from the channel. */
export interface MatrixInboundDeps extends StreamDeps {
  self: string;
  policy: MatrixTrustPolicy;
  gateway: TurnSubmitPort & SessionClearPort;
  approvals: ReturnType<typeof createApprovals>;
  /** Offers a message to missions waiting for one (`waitFor`); the missions that took it (then no turn runs). */
  offerEvent?: MissionEventPort['offerEvent'];
  /** Decrypts `m.room.encrypted` events (crypto.ts); none: they are not read. */
  crypto?: Pick<MatrixCrypto, 'decrypt'>;
}

/** How a message reached us: in the clear, or encrypted by a device that is verified or not. */
type Envelope = { encrypted: false } | { encrypted: true; verified: boolean };
const CLEAR: Envelope = { encrypted: false };
/** A message the tier rules may lift above Untrusted: sent in the clear, or by a verified device. */
const liftable = (e: Envelope): boolean => !e.encrypted || e.verified;

export function createMatrixInbound(deps: MatrixInboundDeps) {
  const { client, store, self, log } = deps;
  /** Turns this process follows, with their room and sender (for `!cancel`). */
  const active = new Map<string, { roomId: string; sender: string }>();
  const streams = new Map<string, LiveStream>();

  async function tierOf(roomId: string, sender: string): Promise<MatrixTier> {
    const members = await client.joinedMembers(roomId);
    return resolveMatrixTier({ roomId, sender, members, self }, deps.policy);
  }

  async function follow(turnId: string, rec: MatrixTurnRecord): Promise<void> {
    if (active.has(turnId) || deps.isStopped()) return;
    active.set(turnId, { roomId: rec.roomId, sender: rec.sender });
    const stream = liveStream(deps, turnId, rec);
    streams.set(turnId, stream);
    const done = (): void => {
      active.delete(turnId);
      if (streams.get(turnId) === stream) streams.delete(turnId);
      void stream.close();
    };
    try {
      const turn = await deps.gateway.start(rec.facts, rec.message!, (e) => stream.onEvent(e), {
        self,
        roomId: rec.roomId,
        replyTo: rec.replyTo,
      });
      void turn.outcome.catch((err: unknown) => !deps.isStopped() && log(`turn ${turnId}: ${(err as Error).message}`)).finally(done);
    } catch (err) {
      done();
      throw err;
    }
  }

  /**
   * The channel facts of a message: its tier from the sender and the room's members, its session the
   * room. A message from a device that is not verified is Untrusted whoever its sender is: the
   * homeserver (or whoever holds the account) can add a device to any account.
   */
  async function factsOf(roomId: string, ev: MatrixEvent, envelope: Envelope = CLEAR): Promise<ChannelFacts> {
    const members = await client.joinedMembers(roomId);
    const origin = { roomId, sender: ev.sender, members, self };
    const trustTier = liftable(envelope) ? resolveMatrixTier(origin, deps.policy) : 'Untrusted';
    // Where requests and notices for an allowlisted person go: the direct chat they write from.
    if (liftable(envelope) && isDirect(origin) && deps.policy.allowlist.includes(ev.sender))
      await store.putJson(dmKey(ev.sender), { roomId });
    return { name: MATRIX_CHANNEL_NAME, platform: 'Matrix', trustTier, sessionId: `mx-${roomId}`, sender: ev.sender };
  }

  /** `/clear` (or `!clear`): the room's session starts empty; audited once per event. */
  async function onClear(roomId: string, ev: MatrixEvent): Promise<void> {
    let text: string;
    try {
      text = (await deps.gateway.clearSession(await factsOf(roomId, ev), matrixMessageId(ev.event_id))).text;
    } catch (err) {
      // A refusal will not heal by fetching the event again: say it (an outage still retries).
      if (!(err instanceof AivyxError)) throw err;
      text = `Sorry, I could not clear this conversation: ${err.message}`;
    }
    await client.sendText(roomId, text, `reply/${ev.event_id}`, ev.event_id);
  }

  /**
   * Offers a message to missions waiting for one: the sender and room as the homeserver stated them
   * (never a display name), the tier resolved for this room, the server's timestamp (an old event
   * fetched again is not the reply a wait opened after it is for). True when a mission took it.
   */
  async function takenByMission(roomId: string, ev: MatrixEvent, text: string, tier: string): Promise<boolean> {
    if (!deps.offerEvent) return false;
    const facts = { source: 'matrix' as const, from: ev.sender, room: roomId, tier };
    return (await deps.offerEvent({ facts, eventId: ev.event_id, text, sentAt: ev.origin_server_ts })).length > 0;
  }

  /** A text message from someone else: a durable turn record, then its turn. */
  async function onText(roomId: string, ev: MatrixEvent, body: string, envelope: Envelope = CLEAR): Promise<void> {
    const turnId = turnWorkflowId(MATRIX_CHANNEL_NAME, matrixMessageId(ev.event_id));
    const known = await store.getJson<MatrixTurnRecord>(turnKey(turnId));
    if (known?.delivered) return;
    if (known?.message) return follow(turnId, known);
    const facts = await factsOf(roomId, ev, envelope);
    // A wait is for its person: a message from a device nobody verified does not end it.
    if (liftable(envelope) && (await takenByMission(roomId, ev, body, facts.trustTier))) return;
    const message: Message = {
      id: matrixMessageId(ev.event_id),
      sessionId: facts.sessionId,
      content: [{ type: 'text', text: body }],
      receivedAt: ev.origin_server_ts,
    };
    const rec: MatrixTurnRecord = { roomId, replyTo: ev.event_id, sender: ev.sender, facts, message };
    await store.putJson(turnKey(turnId), rec);
    try {
      await follow(turnId, rec);
    } catch (err) {
      // Refused before any workflow started (too large): say so, count it as answered.
      if (!(err instanceof AivyxError && err.kind === 'Channel')) throw err;
      await client.sendText(roomId, `Sorry, I cannot take that: ${err.message}`, `refused/${ev.event_id}`, ev.event_id);
      await markDelivered(store, turnId, rec);
    }
  }

  /**
   * An encrypted event: decrypted, then handled as its plaintext would be — except that from a device
   * that is not verified (pinned by the owner: verify.ts) it is only ever an Untrusted message: never
   * an approval, a command or a mission's event.
   */
  async function onEncrypted(roomId: string, ev: MatrixEvent): Promise<void> {
    if (!deps.crypto) return log(`an encrypted event in ${roomId} was not read (end-to-end encryption is off)`);
    const opened = await deps.crypto.decrypt(roomId, ev);
    if (!opened) return;
    // Ciphertext inside ciphertext is nobody's message: it is not opened again.
    if (opened.event.type === 'm.room.encrypted') return log(`an encrypted event in ${roomId} held another: ignored`);
    if (opened.verified) return dispatch(roomId, opened.event);
    const { event } = opened;
    const body = typeof event.content.body === 'string' ? event.content.body : undefined;
    const plainText = event.type === 'm.room.message' && event.content.msgtype === 'm.text' && body !== undefined;
    if (!plainText || relationOf(event.content)?.rel_type === 'm.replace' || body.trim().startsWith('!') || body.trim() === CLEAR_COMMAND)
      return log(`an encrypted ${event.type} in ${roomId} from an unverified device was not acted on`);
    return onText(roomId, event, body, { encrypted: true, verified: false });
  }

  async function dispatch(roomId: string, ev: MatrixEvent): Promise<void> {
    const rel = relationOf(ev.content);
    if (ev.type === 'm.reaction') return rel?.rel_type === 'm.annotation' ? deps.approvals.onReaction(roomId, ev, rel) : undefined;
    if (ev.type === 'm.room.encrypted') return onEncrypted(roomId, ev);
    if (ev.type !== 'm.room.message' || ev.content.msgtype !== 'm.text' || typeof ev.content.body !== 'string') return;
    // An edit is neither a new request nor a change to one already made (or approved).
    if (rel?.rel_type === 'm.replace') return log(`an edit in ${roomId} was ignored`);
    const body = ev.content.body.trim();
    if (body === CLEAR_COMMAND || body === '!clear') return onClear(roomId, ev);
    if (body.startsWith('!')) return deps.approvals.onCommand(roomId, ev, body);
    return onText(roomId, ev, ev.content.body);
  }

  /** Handles one timeline event at most once. A throw leaves it unseen: the sync batch is fetched again. */
  async function handle(roomId: string, ev: MatrixEvent): Promise<void> {
    if (ev.sender === self) return;
    if (await store.getJson(seenKey(ev.event_id))) return;
    await dispatch(roomId, ev);
    await store.putJson(seenKey(ev.event_id), { at: Date.now() });
  }

  return {
    handle,
    tierOf,
    runningTurn: (roomId: string, sender: string) => [...active.entries()].find(([, t]) => t.roomId === roomId && t.sender === sender)?.[0],
    closeStream: async (turnId: string) => streams.get(turnId)?.close(),
  };
}
