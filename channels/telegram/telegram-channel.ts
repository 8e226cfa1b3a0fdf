/**
 * The Telegram channel on grammY. Each message of a chat starts (or continues) that chat's
 * session; the turn id comes from chat id + message id, so a redelivered update never runs a
 * second turn. Replies stream by editing one message; the final reply is delivered by the turn
 * workflow's `deliverReply` activity through the deliverer this channel registers
 * (`delivery.ts`), and gate notices carry Approve / Deny buttons (`approvals.ts`).
 * Records in `channel_state`: see `state.ts`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { autoRetry } from '@grammyjs/auto-retry';
import { apiThrottler } from '@grammyjs/transformer-throttler';
import { Bot, webhookCallback, type Context } from 'grammy';
import type { Update } from 'grammy/types';
import type { DeliveryRegistry } from '../../activities/delivery-activities.js';
import type { ChannelFacts } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { ContentPart, Message } from '../../core/message.js';
import type { GateTokens } from '../../infra/gate-tokens.js';
import type { ChannelEvent } from '../../infra/stream-hub.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import type { TurnGateway } from '../turn-gateway.js';
import { checkPress, decideGate, openGatesFor, parseCallbackData, type TelegramDecider, type TelegramMissionPort } from './approvals.js';
import { createTelegramDeliverer, editText, toReplyRoute } from './delivery.js';
import { streamView } from './render.js';
import { markDelivered, turnKey, updateChat, type ChatState, type TurnRecord } from './state.js';
import { resolveTelegramTier, validateTrustPolicy, type TelegramTier } from './trust.js';

/** Channel instance name used in turn and session ids (and the delivery registry). */
export const TELEGRAM_CHANNEL_NAME = 'telegram';

/** Options of `startTelegramChannel`. */
export interface TelegramChannelOptions {
  token: string;
  /** Bot API root (default https://api.telegram.org); tests point it at an emulator. */
  apiRoot?: string;
  gateway: TurnGateway;
  /** The worker's delivery registry: the channel registers its deliverer as `telegram` (final replies, gate notices). */
  deliveries: DeliveryRegistry;
  /** The `channel_state` domain handle. */
  storage: DomainHandle;
  /** Telegram user ids whose private chats are SemiTrusted. */
  allowlist: readonly number[];
  /** Per-chat tier overrides by chat id, never above SemiTrusted. */
  chatTiers?: Readonly<Record<string, TelegramTier>>;
  mode: 'polling' | { webhook: { secretToken: string; port: number; host?: string; path?: string } };
  /** Missions, for buttons, `/approve`, `/deny` and the open gates in `/status`; without it approvals are refused. */
  missions?: TelegramMissionPort;
  /** MACed single-use button tokens (over the same `channel_state` domain); without them requests have no buttons. */
  gateTokens?: GateTokens;
  /** Minimum gap between streamed edits of one reply (default 1,000 ms). */
  editIntervalMs?: number;
  /** Long-poll timeout in seconds (default 30). */
  pollTimeoutSeconds?: number;
  /** grammY throttler limits; `false` disables it (default: Telegram's published limits). */
  throttle?: Parameters<typeof apiThrottler>[0] | false;
  /** Largest retry_after (seconds) auto-retry waits for (default 60). */
  maxRetryDelaySeconds?: number;
  log?: (line: string) => void;
}

/** A running channel. */
export interface TelegramChannel {
  /** Webhook URL path and port when in webhook mode. */
  webhookUrl?: string;
  /** Stops polling/serving and unregisters the deliverer; turns keep running in Temporal and their replies wait (retried) for the next start. */
  stop(): Promise<void>;
}

/** A turn's streamed view, owned by the adapter until the deliverer closes it for the final edit. */
interface LiveStream {
  onEvent(e: ChannelEvent): void;
  /** No more edits; resolves once an edit in flight has finished (and its message id is stored). */
  close(): Promise<void>;
}

const HELP = [
  'I am your aivyx assistant. Send me a message, a photo or a document.',
  '/status — what I am doing in this chat, and approvals waiting for you',
  '/cancel — stop the running request',
  '/approve <gate id>, /deny <gate id> [reason] — answer an approval request (or press its buttons)',
  '/help — this text',
].join('\n');

/**
 * The aivyx message id of a Telegram message: bot id + chat id + message id (message ids are
 * per chat, and two bots of one install see the same chats).
 */
export function telegramMessageId(botId: number, chatId: number, messageId: number): string {
  return `${botId}_${chatId}_${messageId}`;
}

/** Starts the Telegram channel; resolves once it is receiving updates. */
export async function startTelegramChannel(opts: TelegramChannelOptions): Promise<TelegramChannel> {
  const policy = { allowlist: opts.allowlist, ...(opts.chatTiers ? { chatTiers: opts.chatTiers } : {}) };
  validateTrustPolicy(policy);
  const log = opts.log ?? ((line: string) => console.warn(`[telegram] ${line}`));
  const apiRoot = opts.apiRoot ?? 'https://api.telegram.org';
  const editInterval = opts.editIntervalMs ?? 1000;
  const store = opts.storage;
  const bot = new Bot(opts.token, { client: { apiRoot } });
  // Order matters: the throttler queues, auto-retry (installed last, so it runs first) retries
  // 429s after retry_after and 5xx with backoff underneath it.
  if (opts.throttle !== false) bot.api.config.use(apiThrottler(opts.throttle));
  bot.api.config.use(autoRetry({ maxRetryAttempts: 8, maxDelaySeconds: opts.maxRetryDelaySeconds ?? 60 }));

  let stopped = false;
  const abort = new AbortController();
  /** Turns this process follows (a redelivery must not start a second follower). */
  const active = new Set<string>();
  /** Streamed views by turn id, closed by the deliverer before its final edit. */
  const streams = new Map<string, LiveStream>();

  function tierOf(ctx: Context): TelegramTier {
    const chat = ctx.chat!;
    return resolveTelegramTier({ chatId: chat.id, chatType: chat.type, ...(ctx.from ? { senderId: ctx.from.id } : {}) }, policy);
  }

  async function download(fileId: string): Promise<Buffer> {
    const file = await bot.api.getFile(fileId);
    if (!file.file_path) throw new AivyxError('Channel', 'Telegram gave no file path for an attachment');
    const res = await fetch(`${apiRoot}/file/bot${opts.token}/${file.file_path}`, { signal: abort.signal });
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
      const largest = m.photo.reduce((a, b) => ((b.width * b.height > a.width * a.height) ? b : a));
      parts.push({ type: 'image', mime: 'image/jpeg', data: (await download(largest.file_id)).toString('base64') });
    }
    if (m.document) {
      const mime = m.document.mime_type ?? 'application/octet-stream';
      const data = (await download(m.document.file_id)).toString('base64');
      const filename = m.document.file_name;
      parts.push(mime.startsWith('image/') ? { type: 'image', mime, data, ...(filename ? { filename } : {}) } : { type: 'document', mime, data, ...(filename ? { filename } : {}) });
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
      chain = chain.then(async () => {
        const view = streamView(text, status);
        if (stopped || closed || view === shown) return;
        shown = view;
        lastEdit = Date.now();
        if (rec.streamMessageId === undefined) {
          const sent = await bot.api.sendMessage(rec.chatId, view, { reply_parameters: { message_id: rec.replyTo, allow_sending_without_reply: true } });
          rec.streamMessageId = sent.message_id;
          // The deliverer reads the id from here (it may run in another process).
          await store.putJson(turnKey(turnId), rec);
        } else {
          await editText(bot.api, rec.chatId, rec.streamMessageId, view);
        }
      }).catch((err: unknown) => log(`streaming ${turnId}: ${(err as Error).message}`));
    };
    const schedule = (): void => {
      if (timer !== undefined || stopped || closed) return;
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
            status.push(`⚙ ${e.tool}: ${e.summary}`);
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
    if (active.has(turnId) || stopped) return;
    active.add(turnId);
    const stream = liveStream(turnId, rec);
    streams.set(turnId, stream);
    const done = (ended: boolean): void => {
      active.delete(turnId);
      if (streams.get(turnId) === stream) streams.delete(turnId);
      void stream.close();
      // The deliverer normally did this; a turn whose reply could not be delivered must not stay "in progress".
      if (ended && !stopped) updateChat(store, rec.chatId, (s) => ({ open: s.open.filter((t) => t !== turnId) })).catch((err: unknown) => log(`chat ${rec.chatId}: ${(err as Error).message}`));
    };
    try {
      const turn = await opts.gateway.start(rec.facts, rec.message!, (e) => stream.onEvent(e), toReplyRoute({ botId: bot.botInfo.id, chatId: rec.chatId, replyTo: rec.replyTo }));
      void turn.outcome
        .catch((err: unknown) => {
          if (!stopped) log(`turn ${turnId}: ${(err as Error).message}`);
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
    const sender = String(ctx.from?.id ?? chat.id);
    const facts: ChannelFacts = { name: TELEGRAM_CHANNEL_NAME, platform: 'Telegram', trustTier: tierOf(ctx), sessionId: `tg-${bot.botInfo.id}-${chat.id}`, sender };
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

  /** The presser/sender as a decider: id and tier from the update, never from text or token. */
  function deciderOf(ctx: Context, chat: { id: number; type: 'private' | 'group' | 'supergroup' | 'channel' } | undefined): TelegramDecider | undefined {
    const from = ctx.from;
    if (!from) return undefined;
    const trustTier: TelegramTier = chat ? resolveTelegramTier({ chatId: chat.id, chatType: chat.type, senderId: from.id }, policy) : 'Untrusted';
    return { userId: from.id, name: from.username ? `${from.first_name} (@${from.username})` : from.first_name, trustTier };
  }

  /** A button press: answered always; token verified and bound to the presser before any decision. */
  async function onCallback(ctx: Context): Promise<void> {
    const q = ctx.callbackQuery!;
    let answer = 'This button is not recognised.';
    try {
      const parsed = parseCallbackData(q.data);
      if (!parsed) return;
      if (!opts.missions || !opts.gateTokens) {
        answer = 'Approvals are not enabled on this bot.';
        return;
      }
      const press = await checkPress(opts.gateTokens, parsed.token, q.from.id);
      if (!press.ok) {
        answer = press.line;
        return;
      }
      const who = deciderOf(ctx, q.message?.chat);
      if (!who) return;
      const result = await decideGate(opts.missions, parsed.kind, press.gateId, who);
      answer = result.line;
      if (!result.ok) return;
      await opts.gateTokens.markUsed(parsed.token, parsed.kind);
      if (q.message) await editText(bot.api, q.message.chat.id, q.message.message_id, `${result.line}\nGate: ${press.gateId}`);
    } catch (err) {
      log(`callback ${q.id}: ${(err as Error).message}`);
      answer = 'Something went wrong; nothing was decided.';
    } finally {
      await ctx.answerCallbackQuery({ text: answer, show_alert: answer.startsWith('Refused') }).catch((err: unknown) => log(`answerCallbackQuery: ${(err as Error).message}`));
    }
  }

  bot.command(['start', 'help'], (ctx) => ctx.reply(HELP));
  bot.command('status', async (ctx) => {
    const s = (await store.getJson<ChatState>(`chat/${ctx.chat.id}`)) ?? { open: [] };
    const lines = [`Trust tier here: ${tierOf(ctx)}. ${s.open.length === 0 ? 'Nothing running.' : `${s.open.length} request(s) in progress.`}`];
    if (opts.missions && ctx.from) {
      const gates = await openGatesFor(store, opts.missions, ctx.from.id).catch(() => undefined);
      if (gates === undefined) lines.push('Could not list approvals right now.');
      else lines.push(gates.length === 0 ? 'No approvals waiting for you.' : ['Approvals waiting for you:', ...gates].join('\n'));
    }
    await ctx.reply(lines.join('\n'));
  });
  bot.command('cancel', async (ctx) => {
    const s = (await store.getJson<ChatState>(`chat/${ctx.chat.id}`)) ?? { open: [] };
    const running = s.open[0];
    if (!running) return void (await ctx.reply('Nothing to cancel.'));
    const rec = await store.getJson<TurnRecord>(turnKey(running));
    // In a group only the sender of the request (or an allowlisted user) may cancel it.
    const from = ctx.from?.id;
    if (rec && from !== undefined && rec.sender !== String(from) && !policy.allowlist.includes(from)) return void (await ctx.reply('Only the person who asked can cancel that.'));
    await opts.gateway.cancel(running);
    await ctx.reply('Cancelling…');
  });
  bot.command(['approve', 'deny'], async (ctx) => {
    const kind = ctx.message?.text?.startsWith('/approve') ? 'approve' : 'deny';
    if (!opts.missions) return void (await ctx.reply('There is nothing to approve here yet.'));
    const [gateId, ...rest] = String(ctx.match ?? '').trim().split(/\s+/);
    if (!gateId) return void (await ctx.reply(`Usage: /${kind} <gate id>${kind === 'deny' ? ' [reason]' : ''} (see /status)`));
    const who = deciderOf(ctx, ctx.chat);
    if (!who) return void (await ctx.reply('I cannot tell who you are here.'));
    const reason = rest.join(' ').trim();
    const result = await decideGate(opts.missions, kind, gateId, who, reason || undefined);
    await ctx.reply(result.ok ? `${result.line} (gate ${gateId})` : result.line);
  });
  bot.on('callback_query', onCallback);
  bot.on(['message', 'channel_post'], ingestMessage);

  await bot.init();
  // Final replies and gate notices: the worker's activities call this deliverer (same process in `aivyx up`).
  const unregister = opts.deliveries.register(
    TELEGRAM_CHANNEL_NAME,
    createTelegramDeliverer({
      api: bot.api,
      botId: bot.botInfo.id,
      store,
      ...(opts.gateTokens ? { tokens: opts.gateTokens } : {}),
      closeStream: async (turnId) => streams.get(turnId)?.close(),
      log,
    }),
  );

  if (opts.mode === 'polling') {
    await bot.api.deleteWebhook();
    const loop = pollLoop();
    return {
      async stop() {
        stopped = true;
        unregister();
        abort.abort();
        await loop;
      },
    };
  }

  const { secretToken, port, host = '127.0.0.1', path = '/telegram/webhook' } = opts.mode.webhook;
  if (secretToken.length < 16) unregister();
  if (secretToken.length < 16) throw new AivyxError('Config', 'the Telegram webhook secret token is too short', { hint: 'use at least 16 random characters' });
  const handle = webhookCallback(bot, 'http', { secretToken });
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== path) {
      res.writeHead(404).end();
      return;
    }
    // Telegram retries a webhook until it gets 200, so a 200 means the message is recorded.
    handle(req, res).catch((err: unknown) => {
      log(`webhook: ${(err as Error).message}`);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const addr = server.address() as AddressInfo;
  return {
    webhookUrl: `http://${host}:${addr.port}${path}`,
    async stop() {
      stopped = true;
      unregister();
      abort.abort();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  /**
   * Long polling with our own durable offset: an update is confirmed to Telegram (and the offset
   * stored) only after it is ingested, so a crash re-fetches it and the turn id dedupes it.
   * (`@grammyjs/runner` confirms updates as soon as they are fetched, which can lose one.)
   */
  async function pollLoop(): Promise<void> {
    // Update ids are per bot: a new token starts a new sequence.
    const offsetKey = `offset/${bot.botInfo.id}`;
    let offset = (await store.getJson<{ next: number }>(offsetKey))?.next ?? 0;
    let backoff = 500;
    while (!stopped) {
      let updates: Update[];
      try {
        updates = await bot.api.getUpdates({ offset, timeout: opts.pollTimeoutSeconds ?? 30, allowed_updates: ['message', 'channel_post', 'callback_query'] }, abort.signal as Parameters<typeof bot.api.getUpdates>[1]);
        backoff = 500;
      } catch (err) {
        if (stopped) return;
        log(`getUpdates: ${(err as Error).message}; retrying in ${backoff} ms`);
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
        continue;
      }
      for (const u of updates) {
        if (stopped) return;
        try {
          await bot.handleUpdate(u);
        } catch (err) {
          if (stopped) return;
          // Not ingested (Temporal or the database is down): keep the offset and fetch it again.
          log(`update ${u.update_id}: ${(err as Error).message}; retrying in ${backoff} ms`);
          await sleep(backoff);
          backoff = Math.min(backoff * 2, 30_000);
          break;
        }
        offset = u.update_id + 1;
        await store.putJson(offsetKey, { next: offset });
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
