/**
 * The Telegram `ChannelDeliverer`: a turn's final reply (the `deliverReply` activity) and gate
 * notices (`notifyApprovers` through `routingMissionNotifier`). It runs in the worker process —
 * in `aivyx up`, the adapter's process — and makes every send at most once per activity key
 * through `infra/outbox.ts`, so a retried activity or a restarted process never sends twice.
 * A reply's attachments follow its text: a raster image by sendPhoto, any other file by sendDocument.
 */
import { GrammyError, InputFile, type Api } from 'grammy';
import type { LoadedAttachment } from '../../activities/tools/attachment-port.js';
import { isInlineImage } from '../../core/attachments.js';
import type { ChannelDeliverer, ReplyToDeliver } from '../../activities/delivery-activities.js';
import type { MissionNotice } from '../../activities/mission-activities.js';
import type { ReplyRoute } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { GateApproverRef } from '../../machines/index.js';
import type { GateTokenPort } from '../ports.js';
import { createOutbox } from '../../infra/outbox.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { approvalKeyboard, closedText, inputDigest, requestText } from './approvals.js';
import { outcomeText, splitMessage } from './render.js';
import {
  gateKey,
  markDelivered,
  openGatesKey,
  OUTBOX_PREFIX,
  turnKey,
  type GateMessages,
  type OpenGates,
  type TurnRecord,
} from './state.js';

/** Where a Telegram turn's reply goes (the turn request's `replyRoute`). */
export interface TelegramReplyRoute {
  botId: number;
  chatId: number;
  /** The user's message the reply answers. */
  replyTo: number;
}

/** The route as it travels in a `TurnRequest`. */
export function toReplyRoute(r: TelegramReplyRoute): ReplyRoute {
  return { botId: r.botId, chatId: r.chatId, replyTo: r.replyTo };
}

/** Reads a route back; Config (not retried) when it is not one of ours. */
export function parseReplyRoute(route: ReplyRoute): TelegramReplyRoute {
  const { botId, chatId, replyTo } = route;
  if (typeof botId !== 'number' || typeof chatId !== 'number' || typeof replyTo !== 'number') {
    throw new AivyxError('Config', 'a Telegram reply route needs numeric botId, chatId and replyTo');
  }
  return { botId, chatId, replyTo };
}

/** grammY types its signal parameter with the abort-controller polyfill's class; Node's is the same at run time. */
export type GrammySignal = Parameters<Api['sendMessage']>[3];

/** Edits a message's text (removing its buttons), treating "message is not modified" as done. */
export async function editText(api: Api, chatId: number, messageId: number, text: string, signal?: GrammySignal): Promise<void> {
  try {
    await api.editMessageText(chatId, messageId, text, {}, signal);
  } catch (err) {
    if (err instanceof GrammyError && /not modified/i.test(err.description)) return;
    throw err;
  }
}

/** What the deliverer needs from the adapter. */
export interface TelegramDelivererDeps {
  api: Api;
  botId: number;
  store: DomainHandle;
  /** Issues the button tokens; without it requests carry only the text commands. */
  tokens?: GateTokenPort;
  /** Stops the adapter's streamed edits of a turn (and waits for one in flight) before the final edit. */
  closeStream(turnId: string): Promise<void>;
  /**
   * Aborted when the adapter stops: a call in flight (or waiting out a back-off) fails at once, so
   * its activity attempt ends and Temporal retries it, instead of holding the worker's shutdown.
   */
  signal: AbortSignal;
  log(line: string): void;
}

/** Builds the deliverer the channel registers as `telegram`. */
export function createTelegramDeliverer(deps: TelegramDelivererDeps): Required<ChannelDeliverer> {
  const { api, store, log } = deps;
  const signal = deps.signal as GrammySignal;
  const outbox = createOutbox(store, OUTBOX_PREFIX);

  type SendOptions = Parameters<Api['sendMessage']>[2];
  /** Sends once per key; `options` is computed only when the send really happens (it may issue a token). */
  async function send(
    key: string,
    chatId: number,
    text: string,
    options: () => Promise<SendOptions> | SendOptions = () => ({}),
  ): Promise<number | undefined> {
    const r = await outbox.once(key, async () => (await api.sendMessage(chatId, text, await options(), signal)).message_id);
    if (r.status === 'uncertain') {
      log(`${key} may have been sent before a crash; not sending it again`);
      return undefined;
    }
    return r.value;
  }

  /** An attached file, once per key: a raster image as a photo (shown), anything else as a document (offered). */
  async function sendFile(key: string, chatId: number, file: LoadedAttachment): Promise<void> {
    const input = new InputFile(file.bytes, file.name);
    const asDocument = async () => (await api.sendDocument(chatId, new InputFile(file.bytes, file.name), {}, signal)).message_id;
    const r = await outbox.once(key, async () => {
      if (!isInlineImage(file.mime)) return asDocument();
      try {
        return (await api.sendPhoto(chatId, input, {}, signal)).message_id;
      } catch (err) {
        // Telegram refuses some images as photos (too large, odd dimensions): the file still goes, as a document.
        if (err instanceof GrammyError && err.error_code === 400 && !/chat not found/i.test(err.description)) return asDocument();
        throw err;
      }
    });
    if (r.status === 'uncertain') log(`${key} may have been sent before a crash; not sending it again`);
  }

  async function rememberRequest(gateId: string, chatId: number, messageId: number): Promise<void> {
    const rec = (await store.getJson<GateMessages>(gateKey(gateId))) ?? { messages: [] };
    if (rec.messages.some((m) => m.chatId === chatId && m.messageId === messageId)) return;
    await store.putJson(gateKey(gateId), { messages: [...rec.messages, { chatId, messageId }] } satisfies GateMessages);
  }

  /** Adds or removes a gate in a user's `/status` index. */
  async function indexGate(notice: MissionNotice, userId: string, open: boolean): Promise<void> {
    const key = openGatesKey(userId);
    const rest = ((await store.getJson<OpenGates>(key))?.gates ?? []).filter((g) => g.gateId !== notice.gateId);
    const gates = open
      ? [...rest, { gateId: notice.gateId, missionId: notice.missionId, tool: notice.tool ?? '?', digest: inputDigest(notice.inputHash) }]
      : rest;
    await store.putJson(key, { gates } satisfies OpenGates);
  }

  /** Removes the buttons of every request of `gateId` sent to `chatId` (best effort: a message may be gone). */
  async function closeRequests(gateId: string, chatId: number): Promise<void> {
    const rec = await store.getJson<GateMessages>(gateKey(gateId));
    for (const m of rec?.messages ?? []) {
      if (m.chatId !== chatId) continue;
      try {
        await api.editMessageReplyMarkup(chatId, m.messageId, { reply_markup: { inline_keyboard: [] } }, signal);
      } catch (err) {
        if (!(err instanceof GrammyError && /not modified/i.test(err.description)))
          log(`removing the buttons of ${gateId}: ${(err as Error).message}`);
      }
    }
  }

  /** One approver's notice (see `notifyGate`). */
  async function notifyOne(notice: MissionNotice, identity: string, key: string): Promise<void> {
    const chatId = Number(identity); // a private chat's id is its user's id
    if (notice.kind === 'opened' || notice.kind === 'reminder' || notice.kind === 'escalated') {
      const tokens = deps.tokens;
      const grant = { gateId: notice.gateId, missionId: notice.missionId, identity, channel: 'telegram' };
      // Indexed first, so /status lists the gate as soon as the user can see the request.
      await indexGate(notice, identity, true);
      const messageId = await send(key, chatId, requestText(notice), async () =>
        tokens ? { reply_markup: approvalKeyboard(await tokens.issue(grant)) } : {},
      );
      if (messageId !== undefined) await rememberRequest(notice.gateId, chatId, messageId);
    } else {
      await indexGate(notice, identity, false);
      await closeRequests(notice.gateId, chatId);
      await send(key, chatId, closedText(notice));
    }
  }

  return {
    /** The `channel.send` tool: `to` is a chat id; each part is sent once per `<idemKey>/<i>`. */
    async send(to: string, text: string, idemKey: string): Promise<void> {
      if (!/^-?\d{1,20}$/.test(to))
        throw new AivyxError('Channel', `"${to}" is not a Telegram chat id`, {
          hint: 'use the numeric chat id (a user id for a private chat)',
        });
      for (const [i, part] of splitMessage(text).entries()) await send(`${idemKey}/${i}`, Number(to), part);
    },

    /**
     * Part 0 edits the streamed message when there is one (an edit is idempotent, so a retry
     * simply repeats it); every other part is a send through the outbox under `<idemKey>/<i>`.
     */
    async deliverReply(reply: ReplyToDeliver, idemKey: string): Promise<void> {
      const route = parseReplyRoute(reply.route);
      // Retryable: another bot's adapter may be starting on this worker.
      if (route.botId !== deps.botId)
        throw new AivyxError('Channel', `this reply is for Telegram bot ${route.botId}, not bot ${deps.botId}`);
      await deps.closeStream(reply.turnId);
      const rec = await store.getJson<TurnRecord>(turnKey(reply.turnId));
      // A gateway in another process streams this turn: it reads this before each edit and stops.
      if (rec && !rec.final) await store.putJson(turnKey(reply.turnId), { ...rec, final: true });
      const streamed = rec?.streamMessageId;
      const parts = splitMessage(outcomeText(reply.outcome, reply.turnId));
      try {
        for (const [i, part] of parts.entries()) {
          if (i === 0 && streamed !== undefined) await editText(api, route.chatId, streamed, part, signal);
          else
            await send(`${idemKey}/${i}`, route.chatId, part, () =>
              i === 0 ? { reply_parameters: { message_id: route.replyTo, allow_sending_without_reply: true } } : {},
            );
        }
        for (const file of reply.attachments ?? []) await sendFile(`${idemKey}/file/${file.id}`, route.chatId, file);
      } catch (err) {
        // A chat that is gone or shut us out (blocked, kicked, deleted) will not heal by retrying: the turn keeps the
        // reply in the owner's inbox. Other 400s (rights, a bad part) may, so Temporal retries them.
        if (err instanceof GrammyError && (err.error_code === 403 || /chat not found/i.test(err.description)))
          throw new AivyxError('Channel', `Telegram refused the reply in chat ${route.chatId}: ${err.description}`, {
            detail: { retryable: false },
          });
        throw err;
      }
      if (rec) await markDelivered(store, reply.turnId, rec);
    },

    /**
     * Requests (opened, reminder, escalated) go to each approver's private chat with fresh
     * Approve / Deny buttons; closing notices remove the buttons of the gate's earlier requests
     * and say what happened. One outbox entry per approver: `<idemKey>/<user id>`.
     */
    async notifyGate(notice: MissionNotice, approvers: GateApproverRef[], idemKey: string): Promise<void> {
      for (const a of approvers) {
        if (!/^\d{1,20}$/.test(a.identity)) {
          log(`approver "${a.identity}" of ${notice.gateId} is not a Telegram user id; not notified`);
          continue;
        }
        try {
          await notifyOne(notice, a.identity, `${idemKey}/${a.identity}`);
        } catch (err) {
          // A refusal for this chat (never started the bot, blocked it, no such chat) will not heal by
          // retrying, and a retried activity would hold the mission's gate timers: log it and go on.
          if (err instanceof GrammyError && (err.error_code === 400 || err.error_code === 403))
            log(`could not tell ${a.identity} about ${notice.gateId} (${notice.kind}): ${err.description}`);
          else throw err;
        }
      }
    },
  };
}
