/**
 * The Telegram channel on grammY. Each message of a chat starts (or continues) that chat's
 * session; the turn id comes from chat id + message id, so a redelivered update never runs a
 * second turn. Replies stream by editing one message; the final reply goes through an outbox
 * in `channel_state` so a restart that finishes a turn never sends it twice.
 *
 * State in `channel_state` (all sealed):
 *   offset/<botId>         {next}: the first update id not yet ingested (polling mode)
 *   turn/<turnId>          TurnRecord: chat, sender, facts + message until delivered
 *   pending/<turnId>       index of turns whose final reply is not delivered yet
 *   outbox/<turnId>/<i>    {state: 'sending' | 'sent', messageId?}: part i of the final reply
 *   chat/<chatId>          {open: turnId[]}: undelivered turns of the chat (for /status, /cancel)
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { autoRetry } from '@grammyjs/auto-retry';
import { apiThrottler } from '@grammyjs/transformer-throttler';
import { Bot, GrammyError, webhookCallback, type Context } from 'grammy';
import type { Update } from 'grammy/types';
import type { ChannelFacts } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import type { ContentPart, Message } from '../../core/message.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import type { ChannelEvent } from '../../infra/stream-hub.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import type { TurnGateway } from '../turn-gateway.js';
import { outcomeText, splitMessage, streamView } from './render.js';
import { resolveTelegramTier, validateTrustPolicy, type TelegramTier } from './trust.js';

/** Channel instance name used in turn and session ids. */
export const TELEGRAM_CHANNEL_NAME = 'telegram';

/** An /approve or /deny typed in a chat (the text fallback of approval buttons). */
export interface TelegramApprovalRequest {
  decision: 'approve' | 'deny';
  /** Text after the command, e.g. a gate or approval id. */
  argument: string;
  chatId: number;
  /** Telegram user id of the approver (verified by Telegram, never from text). */
  approver: string;
  /** The approver's tier in this chat, as resolved from the update. */
  trustTier: TelegramTier;
}

/**
 * Where approvals go once missions exist: the port validates approver and tier (the mission's
 * Update validator checks them again) and returns the line to tell the user.
 */
export interface TelegramApprovalPort {
  decide(req: TelegramApprovalRequest): Promise<string>;
}

/** Options of `startTelegramChannel`. */
export interface TelegramChannelOptions {
  token: string;
  /** Bot API root (default https://api.telegram.org); tests point it at an emulator. */
  apiRoot?: string;
  gateway: TurnGateway;
  /** The `channel_state` domain handle. */
  storage: DomainHandle;
  /** Telegram user ids whose private chats are SemiTrusted. */
  allowlist: readonly number[];
  /** Per-chat tier overrides by chat id, never above SemiTrusted. */
  chatTiers?: Readonly<Record<string, TelegramTier>>;
  mode: 'polling' | { webhook: { secretToken: string; port: number; host?: string; path?: string } };
  approvals?: TelegramApprovalPort;
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
  /** Stops polling/serving at once; turns keep running in Temporal and are resumed on the next start. */
  stop(): Promise<void>;
}

interface TurnRecord {
  chatId: number;
  replyTo: number;
  sender: string;
  facts: ChannelFacts;
  /** Dropped once delivered (it may hold image bytes). */
  message?: Message;
  streamMessageId?: number;
  delivered?: boolean;
}

interface OutboxEntry {
  state: 'sending' | 'sent';
  messageId?: number;
}

interface ChatState {
  open: string[];
}

const HELP = [
  'I am your aivyx assistant. Send me a message, a photo or a document.',
  '/status — what I am doing in this chat',
  '/cancel — stop the running request',
  '/approve <id>, /deny <id> — answer an approval request',
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
  /** Turns whose reply this process is delivering (a redelivery must not start a second writer). */
  const active = new Map<string, Promise<void>>();

  const guard = (): void => {
    if (stopped) throw new AivyxError('Cancelled', 'telegram channel stopped');
  };

  async function updateChat(chatId: number, f: (s: ChatState) => ChatState): Promise<void> {
    const key = `chat/${chatId}`;
    const s = (await store.getJson<ChatState>(key)) ?? { open: [] };
    await store.putJson(key, f(s));
  }

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

  /** Edits, treating "message is not modified" as success (the edit already happened). */
  async function edit(chatId: number, messageId: number, text: string): Promise<void> {
    try {
      await bot.api.editMessageText(chatId, messageId, text);
    } catch (err) {
      if (err instanceof GrammyError && /not modified/i.test(err.description)) return;
      throw err;
    }
  }

  /**
   * Delivers the final reply through the outbox. Part 0 edits the streamed message (an edit is
   * idempotent, so it is safe to repeat); later parts are sends, recorded 'sending' before and
   * 'sent' after, and a part found 'sending' after a restart is not sent again (at most once).
   */
  async function deliver(turnId: string, rec: TurnRecord, outcome: TurnOutcome): Promise<void> {
    const parts = splitMessage(outcomeText(outcome));
    for (const [i, part] of parts.entries()) {
      guard();
      const key = `outbox/${turnId}/${i}`;
      const entry = await store.getJson<OutboxEntry>(key);
      if (entry?.state === 'sent') continue;
      const editable = i === 0 && rec.streamMessageId !== undefined;
      if (entry?.state === 'sending' && !editable) {
        log(`part ${i} of ${turnId} may have been sent before a restart; not sending it again`);
        continue;
      }
      await store.putJson(key, { state: 'sending' } satisfies OutboxEntry);
      guard();
      let messageId: number;
      if (editable) {
        await edit(rec.chatId, rec.streamMessageId!, part);
        messageId = rec.streamMessageId!;
      } else {
        messageId = (await bot.api.sendMessage(rec.chatId, part, i === 0 ? { reply_parameters: { message_id: rec.replyTo, allow_sending_without_reply: true } } : {})).message_id;
      }
      await store.putJson(key, { state: 'sent', messageId } satisfies OutboxEntry);
    }
    const { message: _dropped, ...rest } = rec;
    await store.putJson(`turn/${turnId}`, { ...rest, delivered: true } satisfies TurnRecord);
    await store.delete(`pending/${turnId}`);
    await updateChat(rec.chatId, (s) => ({ open: s.open.filter((t) => t !== turnId) }));
  }

  /**
   * Submits (or re-attaches to) a turn and streams its events into one edited message; resolves
   * once Temporal has the turn, with the promise of the delivered reply.
   */
  async function follow(turnId: string, rec: TurnRecord): Promise<{ delivered: Promise<void> }> {
    let text = '';
    const status: string[] = [];
    let shown = '';
    let lastEdit = 0;
    let timer: NodeJS.Timeout | undefined;
    let chain: Promise<void> = Promise.resolve();
    const flush = (): void => {
      timer = undefined;
      chain = chain.then(async () => {
        const view = streamView(text, status);
        if (stopped || view === shown) return;
        shown = view;
        lastEdit = Date.now();
        if (rec.streamMessageId === undefined) {
          const sent = await bot.api.sendMessage(rec.chatId, view, { reply_parameters: { message_id: rec.replyTo, allow_sending_without_reply: true } });
          rec.streamMessageId = sent.message_id;
          await store.putJson(`turn/${turnId}`, rec);
        } else {
          await edit(rec.chatId, rec.streamMessageId, view);
        }
      }).catch((err: unknown) => log(`streaming ${turnId}: ${(err as Error).message}`));
    };
    const schedule = (): void => {
      if (timer !== undefined || stopped) return;
      timer = setTimeout(flush, Math.max(0, lastEdit + editInterval - Date.now()));
    };
    const onEvent = (e: ChannelEvent): void => {
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
    };
    const turn = await opts.gateway.start(rec.facts, rec.message!, onEvent);
    const delivered = (async () => {
      const outcome = await turn.outcome;
      if (timer !== undefined) clearTimeout(timer);
      await chain;
      guard();
      await deliver(turnId, rec, outcome);
    })();
    return { delivered };
  }

  /**
   * Makes sure exactly one task in this process delivers `turnId`. Resolves once the turn is
   * submitted (rejects if it could not be); delivery continues in the background.
   */
  async function ensureFollowing(turnId: string, rec: TurnRecord): Promise<void> {
    if (active.has(turnId) || stopped) return;
    let release!: () => void;
    active.set(turnId, new Promise<void>((r) => (release = r)));
    try {
      const { delivered } = await follow(turnId, rec);
      delivered
        .catch((err: unknown) => {
          if (!stopped) log(`turn ${turnId}: ${(err as Error).message}`);
        })
        .finally(() => {
          active.delete(turnId);
          release();
        });
    } catch (err) {
      active.delete(turnId);
      release();
      throw err;
    }
  }

  /** Durably accepts one user message: record it, start its turn, follow it. */
  async function ingestMessage(ctx: Context): Promise<void> {
    const chat = ctx.chat!;
    const m = ctx.msg!;
    const messageId = telegramMessageId(bot.botInfo.id, chat.id, m.message_id);
    const turnId = turnWorkflowId(TELEGRAM_CHANNEL_NAME, messageId);
    const known = await store.getJson<TurnRecord>(`turn/${turnId}`);
    if (known?.delivered) return; // redelivered after we answered it
    if (known) return ensureFollowing(turnId, known); // redelivered while its turn runs
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
    await store.putJson(`turn/${turnId}`, rec);
    await store.putJson(`pending/${turnId}`, { chatId: chat.id });
    await updateChat(chat.id, (s) => ({ open: [...s.open.filter((t) => t !== turnId), turnId] }));
    void bot.api.sendChatAction(chat.id, 'typing').catch(() => undefined);
    try {
      await ensureFollowing(turnId, rec);
    } catch (err) {
      // Refused before any workflow started (too large): tell the user, count it as answered.
      if (err instanceof AivyxError && err.kind === 'Channel') {
        await ctx.reply(`Sorry, I cannot take that: ${err.message}${err.hint ? ` (${err.hint})` : ''}`);
        await deliverRefusal(turnId, rec);
        return;
      }
      throw err;
    }
  }

  async function deliverRefusal(turnId: string, rec: TurnRecord): Promise<void> {
    const { message: _dropped, ...rest } = rec;
    await store.putJson(`turn/${turnId}`, { ...rest, delivered: true } satisfies TurnRecord);
    await store.delete(`pending/${turnId}`);
    await updateChat(rec.chatId, (s) => ({ open: s.open.filter((t) => t !== turnId) }));
  }

  bot.command(['start', 'help'], (ctx) => ctx.reply(HELP));
  bot.command('status', async (ctx) => {
    const s = (await store.getJson<ChatState>(`chat/${ctx.chat.id}`)) ?? { open: [] };
    await ctx.reply(`Trust tier here: ${tierOf(ctx)}. ${s.open.length === 0 ? 'Nothing running.' : `${s.open.length} request(s) in progress.`}`);
  });
  bot.command('cancel', async (ctx) => {
    const s = (await store.getJson<ChatState>(`chat/${ctx.chat.id}`)) ?? { open: [] };
    const running = s.open[0];
    if (!running) return void (await ctx.reply('Nothing to cancel.'));
    const rec = await store.getJson<TurnRecord>(`turn/${running}`);
    // In a group only the sender of the request (or an allowlisted user) may cancel it.
    const from = ctx.from?.id;
    if (rec && from !== undefined && rec.sender !== String(from) && !policy.allowlist.includes(from)) return void (await ctx.reply('Only the person who asked can cancel that.'));
    await opts.gateway.cancel(running);
    await ctx.reply('Cancelling…');
  });
  bot.command(['approve', 'deny'], async (ctx) => {
    const decision = ctx.message?.text?.startsWith('/approve') ? 'approve' : 'deny';
    if (!opts.approvals) return void (await ctx.reply('There is nothing to approve here yet.'));
    const line = await opts.approvals.decide({ decision, argument: String(ctx.match ?? '').trim(), chatId: ctx.chat.id, approver: String(ctx.from?.id ?? ''), trustTier: tierOf(ctx) });
    await ctx.reply(line);
  });
  bot.on('callback_query', (ctx) => ctx.answerCallbackQuery({ text: 'Buttons are not supported yet; use /approve or /deny.' }));
  bot.on(['message', 'channel_post'], ingestMessage);

  await bot.init();
  // Finish what a previous run left: every turn whose final reply was not delivered.
  for await (const { key } of store.scan('pending/')) {
    const turnId = key.slice('pending/'.length);
    const rec = await store.getJson<TurnRecord>(`turn/${turnId}`);
    if (rec && !rec.delivered && rec.message) {
      ensureFollowing(turnId, rec).catch((err: unknown) => log(`resuming ${turnId}: ${(err as Error).message}`));
    }
  }

  if (opts.mode === 'polling') {
    await bot.api.deleteWebhook();
    const loop = pollLoop();
    return {
      async stop() {
        stopped = true;
        abort.abort();
        await loop;
      },
    };
  }

  const { secretToken, port, host = '127.0.0.1', path = '/telegram/webhook' } = opts.mode.webhook;
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
