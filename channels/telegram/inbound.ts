/**
 * Telegram inbound: a message becomes a durable turn record, then a turn (started or re-attached —
 * the turn id comes from bot, chat and message id, so a redelivered update never runs twice), whose
 * stream is shown by sending one message and editing it. The final reply is the deliverer's.
 */
import type { Bot, Context } from 'grammy';
import type { ChannelEvent, ChannelFacts } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { ContentPart, Message } from '../../core/message.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import type { MissionEventPort, TurnSubmitPort } from '../ports.js';
import { toolSummaryText } from '../outcome-text.js';
import { editText, toReplyRoute } from './delivery.js';
import { streamView } from './render.js';
import { markDelivered, turnKey, updateChat, type TurnRecord } from './state.js';
import type { TelegramTier } from './trust.js';

/** Channel instance name used in turn and session ids (and the delivery registry). */
export const TELEGRAM_CHANNEL_NAME = 'telegram';

/**
 * The aivyx message id of a Telegram message: bot id + chat id + message id (message ids are
 * per chat, and two bots of one install see the same chats).
 */
export function telegramMessageId(botId: number, chatId: number, messageId: number): string {
  return `${botId}_${chatId}_${messageId}`;
}

/** The session of a chat with a bot: one conversation per chat (a group's is shared by its members). */
export function telegramSessionId(botId: number, chatId: number): string {
  return `tg-${botId}-${chatId}`;
}

/** What inbound needs from the channel. */
export interface TelegramInboundDeps {
  bot: Bot;
  token: string;
  apiRoot: string;
  signal: AbortSignal;
  store: DomainHandle;
  editInterval: number;
  gateway: TurnSubmitPort;
  tierOf(ctx: Context): TelegramTier;
  /** Offers a message to missions waiting for one (`waitFor`); the missions that took it (then no turn runs). */
  offerEvent?: MissionEventPort['offerEvent'];
  log(line: string): void;
  isStopped(): boolean;
}

export function createTelegramInbound(deps: TelegramInboundDeps): {
  ingestMessage(ctx: Context): Promise<void>;
  closeStream(turnId: string): Promise<void>;
} {
  const { bot, token, apiRoot, signal, store, editInterval, gateway, tierOf, log, isStopped } = deps;
  /** Turns this process follows (a redelivery must not start a second follower). */
  const active = new Set<string>();
  /** Streamed views by turn id, closed by the deliverer before its final edit. */
  const streams = new Map<string, LiveStream>();

  /** A turn's streamed view, owned by the adapter until the deliverer closes it for the final edit. */
  interface LiveStream {
    onEvent(e: ChannelEvent): void;
    /** No more edits; resolves once an edit in flight has finished (and its message id is stored). */
    close(): Promise<void>;
  }

  async function download(fileId: string): Promise<Buffer> {
    const file = await bot.api.getFile(fileId);
    if (!file.file_path) throw new AivyxError('Channel', 'Telegram gave no file path for an attachment');
    const res = await fetch(`${apiRoot}/file/bot${token}/${file.file_path}`, { signal: signal });
    if (!res.ok) throw new AivyxError('Channel', `downloading an attachment failed with HTTP ${res.status}`);
    return Buffer.from(await res.arrayBuffer());
  }

  /** Message parts of an update: caption/text, the largest photo size, a document. */
  async function contentOf(ctx: Context): Promise<ContentPart[]> {
    const m = ctx.msg!;
    const parts: ContentPart[] = [];
    const text = m.text ?? m.caption;
    if (text) parts.push({ type: 'text', text });
    if (m.photo && m.photo.length > 0) {
      const largest = m.photo.reduce((a, b) => (b.width * b.height > a.width * a.height ? b : a));
      parts.push({ type: 'image', mime: 'image/jpeg', data: (await download(largest.file_id)).toString('base64') });
    }
    if (m.document) {
      const mime = m.document.mime_type ?? 'application/octet-stream';
      const data = (await download(m.document.file_id)).toString('base64');
      const filename = m.document.file_name;
      parts.push(
        mime.startsWith('image/')
          ? { type: 'image', mime, data, ...(filename ? { filename } : {}) }
          : { type: 'document', mime, data, ...(filename ? { filename } : {}) },
      );
    }
    return parts;
  }

  /** The streamed view of one turn: the first text sends a message, later text edits it (rate limited). */
  function liveStream(turnId: string, rec: TurnRecord): LiveStream {
    let text = '';
    const status: string[] = [];
    let shown = '';
    let lastEdit = 0;
    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    let chain: Promise<void> = Promise.resolve();
    const flush = (): void => {
      timer = undefined;
      chain = chain
        .then(async () => {
          const view = streamView(text, status);
          if (isStopped() || closed || view === shown) return;
          // The final reply may be on its way from a worker in another process: its edit must be the last.
          const latest = await store.getJson<TurnRecord>(turnKey(turnId));
          if (latest?.final || latest?.delivered) {
            closed = true;
            return;
          }
          if (latest?.streamMessageId !== undefined) rec.streamMessageId = latest.streamMessageId;
          shown = view;
          lastEdit = Date.now();
          if (rec.streamMessageId === undefined) {
            const sent = await bot.api.sendMessage(rec.chatId, view, {
              reply_parameters: { message_id: rec.replyTo, allow_sending_without_reply: true },
            });
            rec.streamMessageId = sent.message_id;
            // The deliverer reads the id from here (it may run in another process, and may have marked the
            // record final or delivered meanwhile): only the id is added to what is stored now.
            const stored = await store.getJson<TurnRecord>(turnKey(turnId));
            await store.putJson(turnKey(turnId), { ...(stored ?? rec), streamMessageId: sent.message_id });
          } else {
            await editText(bot.api, rec.chatId, rec.streamMessageId, view);
          }
        })
        .catch((err: unknown) => log(`streaming ${turnId}: ${(err as Error).message}`));
    };
    const schedule = (): void => {
      if (timer !== undefined || isStopped() || closed) return;
      timer = setTimeout(flush, Math.max(0, lastEdit + editInterval - Date.now()));
    };
    return {
      onEvent(e) {
        if (closed) return;
        switch (e.type) {
          case 'text':
            text += e.text;
            break;
          case 'step_restarted':
            text = '';
            break;
          case 'status':
            status.push(`· ${e.text}`);
            break;
          case 'tool_started':
            status.push(`⚙ ${e.tool}…`);
            break;
          case 'tool_finished':
            status.push(`⚙ ${e.tool}: ${toolSummaryText(e.summary)}`);
            break;
          default:
            return;
        }
        schedule();
      },
      async close() {
        closed = true;
        if (timer !== undefined) clearTimeout(timer);
        timer = undefined;
        await chain;
      },
    };
  }

  /**
   * Submits (or re-attaches to) a turn whose reply the workflow delivers, streaming its events
   * meanwhile; resolves once Temporal has the turn.
   */
  async function follow(turnId: string, rec: TurnRecord): Promise<void> {
    if (active.has(turnId) || isStopped()) return;
    active.add(turnId);
    const stream = liveStream(turnId, rec);
    streams.set(turnId, stream);
    const done = (ended: boolean): void => {
      active.delete(turnId);
      if (streams.get(turnId) === stream) streams.delete(turnId);
      void stream.close();
      // The deliverer normally did this; a turn whose reply could not be delivered must not stay "in progress".
      if (ended && !isStopped())
        updateChat(store, rec.chatId, (s) => ({ open: s.open.filter((t) => t !== turnId) })).catch((err: unknown) =>
          log(`chat ${rec.chatId}: ${(err as Error).message}`),
        );
    };
    try {
      const turn = await gateway.start(
        rec.facts,
        rec.message!,
        (e) => stream.onEvent(e),
        toReplyRoute({ botId: bot.botInfo.id, chatId: rec.chatId, replyTo: rec.replyTo }),
      );
      void turn.outcome
        .catch((err: unknown) => {
          if (!isStopped()) log(`turn ${turnId}: ${(err as Error).message}`);
        })
        .finally(() => done(true));
    } catch (err) {
      done(false);
      throw err;
    }
  }

  /** Durably accepts one user message: record it, start its turn (which delivers its own reply). */
  async function ingestMessage(ctx: Context): Promise<void> {
    const chat = ctx.chat!;
    const m = ctx.msg!;
    const messageId = telegramMessageId(bot.botInfo.id, chat.id, m.message_id);
    const turnId = turnWorkflowId(TELEGRAM_CHANNEL_NAME, messageId);
    const known = await store.getJson<TurnRecord>(turnKey(turnId));
    if (known?.delivered) return; // redelivered after we answered it
    // Redelivered before the offset was stored: starting again returns the same turn (or starts it if the first start was lost).
    if (known?.message) return follow(turnId, known);
    let content: ContentPart[];
    try {
      content = await contentOf(ctx);
    } catch (err) {
      if (err instanceof AivyxError) {
        await ctx.reply(`Sorry, I could not read that: ${err.message}`);
        return;
      }
      throw err;
    }
    if (content.length === 0) return; // stickers, service messages: nothing to answer
    // A message a mission waits for (from this person, with these words) is the mission's, not a turn's.
    if (deps.offerEvent && ctx.from && !ctx.from.is_bot) {
      const from = {
        source: 'telegram' as const,
        from: String(ctx.from.id),
        ...(ctx.from.username ? { username: ctx.from.username } : {}),
        tier: tierOf(ctx),
      };
      if ((await deps.offerEvent({ facts: from, eventId: messageId, text: m.text ?? m.caption ?? '' })).length > 0) return;
    }
    const sender = String(ctx.from?.id ?? chat.id);
    const facts: ChannelFacts = {
      name: TELEGRAM_CHANNEL_NAME,
      platform: 'Telegram',
      trustTier: tierOf(ctx),
      sessionId: telegramSessionId(bot.botInfo.id, chat.id),
      sender,
    };
    const message: Message = { id: messageId, sessionId: facts.sessionId, content, receivedAt: m.date * 1000 };
    const rec: TurnRecord = { chatId: chat.id, replyTo: m.message_id, sender, facts, message };
    await store.putJson(turnKey(turnId), rec);
    await updateChat(store, chat.id, (s) => ({ open: [...s.open.filter((t) => t !== turnId), turnId] }));
    void bot.api.sendChatAction(chat.id, 'typing').catch(() => undefined);
    try {
      await follow(turnId, rec);
    } catch (err) {
      // Refused before any workflow started (too large): tell the user, count it as answered.
      if (err instanceof AivyxError && err.kind === 'Channel') {
        await ctx.reply(`Sorry, I cannot take that: ${err.message}${err.hint ? ` (${err.hint})` : ''}`);
        await markDelivered(store, turnId, rec);
        return;
      }
      throw err;
    }
  }

  return { ingestMessage, closeStream: async (turnId) => streams.get(turnId)?.close() };
}
