/**
 * The Matrix `ChannelDeliverer`: a turn's final reply (`deliverReply`) and its files, gate notices
 * (`notifyGate`) and `channel.send`. It runs in the worker process; every send is at most once per
 * activity key (infra/outbox.ts) and carries a transaction id derived from that key, so the
 * homeserver answers a repeat with the first event.
 */
import type { ChannelDeliverer, ReplyToDeliver } from '../../activities/delivery-activities.js';
import type { MissionNotice } from '../../activities/mission-activities.js';
import type { LoadedAttachment } from '../../activities/tools/attachment-port.js';
import type { ReplyRoute } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { GateApproverRef } from '../../machines/index.js';
import { createOutbox } from '../../infra/outbox.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import type { GateTokenPort } from '../ports.js';
import { MXID, type MatrixClient } from './client.js';
import { fileMessage } from './files.js';
import { closedText, outcomeText, requestText, splitText } from './render.js';
import {
  dmKey,
  gateKey,
  markDelivered,
  OUTBOX_PREFIX,
  requestKey,
  turnKey,
  type ApprovalRequest,
  type GateRequests,
  type MatrixTurnRecord,
} from './state.js';

/** Where a Matrix turn's reply goes (the turn request's `replyRoute`). */
export interface MatrixReplyRoute {
  /** The assistant account the turn came in on. */
  self: string;
  roomId: string;
  replyTo: string;
}

/** Reads a route back; Config (not retried) when it is not one of ours. */
export function parseReplyRoute(route: ReplyRoute): MatrixReplyRoute {
  const { self, roomId, replyTo } = route;
  if (typeof self !== 'string' || typeof roomId !== 'string' || typeof replyTo !== 'string')
    throw new AivyxError('Config', 'a Matrix reply route needs self, roomId and replyTo');
  return { self, roomId, replyTo };
}

/** What the deliverer needs. */
export interface MatrixDelivererDeps {
  client: MatrixClient;
  self: string;
  store: DomainHandle;
  tokens?: GateTokenPort;
  /** Stops the adapter's streamed edits of a turn (and waits for one in flight) before the final edit. */
  closeStream(turnId: string): Promise<void>;
  log(line: string): void;
}

/**
 * The direct chat with `userId`: the one they wrote from, or a new private room inviting them — a
 * new one too when someone else joined the old one since (a request is for their eyes only).
 */
export async function directRoom(client: MatrixClient, store: DomainHandle, userId: string, self: string): Promise<string> {
  const known = await store.getJson<{ roomId: string }>(dmKey(userId));
  // A room the assistant was removed from answers 403: that one is not usable either.
  const members = known ? await client.joinedMembers(known.roomId).catch(() => [userId, '(gone)']) : [];
  if (known && members.every((m) => m === self || m === userId)) return known.roomId;
  const roomId = await client.createDirectRoom(userId);
  await store.putJson(dmKey(userId), { roomId });
  return roomId;
}

/** Builds the deliverer the channel registers as `matrix`. */
export function createMatrixDeliverer(deps: MatrixDelivererDeps): Required<ChannelDeliverer> {
  const { client, store, log } = deps;
  const outbox = createOutbox(store, OUTBOX_PREFIX);

  /** Sends once per key; the event id (undefined when a crash left it uncertain: not sent again). */
  async function send(key: string, roomId: string, text: string, replyTo?: string): Promise<string | undefined> {
    const r = await outbox.once(key, () => client.sendText(roomId, text, key, replyTo));
    if (r.status === 'uncertain') {
      log(`${key} may have been sent before a crash; not sending it again`);
      return undefined;
    }
    return r.value;
  }

  /** An attached file, once per key: uploaded, then an `m.image` or `m.file` event. */
  async function sendFile(key: string, roomId: string, file: LoadedAttachment, encrypted: boolean): Promise<void> {
    const r = await outbox.once(key, async () => client.send(roomId, 'm.room.message', await fileMessage(client, file, encrypted), key));
    if (r.status === 'uncertain') log(`${key} may have been sent before a crash; not sending it again`);
  }

  async function rememberRequest(gateId: string, roomId: string, eventId: string, token: string): Promise<void> {
    await store.putJson(requestKey(eventId), { roomId, gateId, token } satisfies ApprovalRequest);
    const rec = (await store.getJson<GateRequests>(gateKey(gateId))) ?? { requests: [] };
    await store.putJson(gateKey(gateId), { requests: [...rec.requests, { roomId, eventId }] } satisfies GateRequests);
  }

  /** A closed gate: its requests say so (an edit), so no one reacts to a stale one. */
  async function closeRequests(notice: MissionNotice, roomId: string, key: string): Promise<void> {
    const rec = await store.getJson<GateRequests>(gateKey(notice.gateId));
    for (const r of rec?.requests ?? []) {
      if (r.roomId !== roomId) continue;
      await client
        .editText(roomId, r.eventId, `${closedText(notice)}\n(This request is closed.)`, `${key}/close/${r.eventId}`)
        .catch((err: unknown) => log(`closing a request of ${notice.gateId}: ${(err as Error).message}`));
    }
  }

  async function notifyOne(notice: MissionNotice, userId: string, key: string): Promise<void> {
    const roomId = await directRoom(client, store, userId, deps.self);
    if (notice.kind === 'opened' || notice.kind === 'reminder' || notice.kind === 'escalated') {
      const r = await outbox.once(key, async () => {
        const token = deps.tokens
          ? await deps.tokens.issue({ gateId: notice.gateId, missionId: notice.missionId, identity: userId, channel: 'matrix' })
          : undefined;
        const eventId = await client.sendText(roomId, requestText(notice), key);
        if (token) await rememberRequest(notice.gateId, roomId, eventId, token);
        return eventId;
      });
      if (r.status === 'uncertain') log(`${key} may have been sent before a crash; not sending it again`);
    } else {
      await closeRequests(notice, roomId, key);
      await send(key, roomId, closedText(notice));
    }
  }

  return {
    /** The `channel.send` tool: `to` is a room id (`!…`) or a user id (their direct chat). */
    async send(to: string, text: string, idemKey: string): Promise<void> {
      if (!/^!.+:.+$/.test(to) && !MXID.test(to))
        throw new AivyxError('Channel', `"${to}" is not a Matrix room or user id`, { hint: 'use !room:server or @user:server' });
      const roomId = to.startsWith('@') ? await directRoom(client, store, to, deps.self) : to;
      for (const [i, part] of splitText(text).entries()) await send(`${idemKey}/${i}`, roomId, part);
    },

    /** Part 0 replaces the streamed message when there is one; every other part is a send under `<idemKey>/<i>`. */
    async deliverReply(reply: ReplyToDeliver, idemKey: string): Promise<void> {
      const route = parseReplyRoute(reply.route);
      if (route.self !== deps.self) throw new AivyxError('Channel', `this reply is for Matrix account ${route.self}, not ${deps.self}`);
      await deps.closeStream(reply.turnId);
      const rec = await store.getJson<MatrixTurnRecord>(turnKey(reply.turnId));
      // A gateway in another process streams this turn: it reads this before each edit and stops.
      if (rec && !rec.final) await store.putJson(turnKey(reply.turnId), { ...rec, final: true });
      const parts = splitText(outcomeText(reply.outcome, reply.turnId));
      for (const [i, part] of parts.entries()) {
        if (i === 0 && rec?.streamEventId) await client.editText(route.roomId, rec.streamEventId, part, `${idemKey}/0/final`);
        else await send(`${idemKey}/${i}`, route.roomId, part, i === 0 ? route.replyTo : undefined);
      }
      // The files follow the text, each once per key; into an encrypted room only encrypted (files.ts).
      const files = reply.attachments ?? [];
      const encrypted = files.length > 0 && (await client.isEncrypted(route.roomId));
      for (const file of files) await sendFile(`${idemKey}/file/${file.id}`, route.roomId, file, encrypted);
      if (rec) await markDelivered(store, reply.turnId, rec);
    },

    /** Requests go to each approver's direct chat, each with its own single-use token behind the message. */
    async notifyGate(notice: MissionNotice, approvers: GateApproverRef[], idemKey: string): Promise<void> {
      for (const a of approvers) {
        if (!MXID.test(a.identity)) {
          log(`approver "${a.identity}" of ${notice.gateId} is not a Matrix user id; not notified`);
          continue;
        }
        await notifyOne(notice, a.identity, `${idemKey}/${a.identity}`);
      }
    },
  };
}
