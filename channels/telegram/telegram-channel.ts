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
import { AivyxError } from '../../core/errors.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { startCursorLoop } from '../kit/cursor-loop.js';
import type { ChatTurnPort, DelivererRegistry, GateTokenPort, OwnerSurfaces } from '../ports.js';
import { deciderOf, type DeciderChat, type TelegramMissionPort } from './approvals.js';
import { buttonsComposer } from './buttons.js';
import { commandsComposer } from './commands.js';
import { missionsComposer } from './missions.js';
import { skillsComposer } from './skills.js';
import type { MissionControlPort, ScheduleControlPort } from '../../activities/ports.js';
import { createTelegramInbound, TELEGRAM_CHANNEL_NAME } from './inbound.js';
import { createTelegramDeliverer, type GrammySignal } from './delivery.js';
import { resolveTelegramTier, validateTrustPolicy, type TelegramTier } from './trust.js';

export { TELEGRAM_CHANNEL_NAME, telegramMessageId } from './inbound.js';

/** Options of `startTelegramChannel`. */
export interface TelegramChannelOptions {
  token: string;
  /** Bot API root (default https://api.telegram.org); tests point it at an emulator. */
  apiRoot?: string;
  gateway: ChatTurnPort;
  /** The worker's delivery registry: the channel registers its deliverer as `telegram` (final replies, gate notices). */
  deliveries: DelivererRegistry;
  /** The `channel_state` domain handle. */
  storage: DomainHandle;
  /** Telegram user ids whose private chats are SemiTrusted. */
  allowlist: readonly number[];
  /** Per-chat tier overrides by chat id, never above SemiTrusted. */
  chatTiers?: Readonly<Record<string, TelegramTier>>;
  mode: 'polling' | { webhook: { secretToken: string; port: number; host?: string; path?: string } };
  /** Missions, for buttons, `/approve`, `/deny` and the open gates in `/status`; without it approvals are refused. */
  missions?: TelegramMissionPort;
  /** The sender's own missions for `/missions` and its Cancel / Pause / Resume buttons; without it `/missions` says it is not available. */
  missionControl?: MissionControlPort & ScheduleControlPort;
  /** The owner's identities and skills: `/skills`, `/skill`, `/skilledit`, `/retire` for the owner in a private chat. */
  owner?: OwnerSurfaces;
  /** MACed single-use button tokens (over the same `channel_state` domain); without them requests have no buttons. */
  gateTokens?: GateTokenPort;
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

/** The bot with our API transformers. */
function createBot(opts: Pick<TelegramChannelOptions, 'token' | 'apiRoot' | 'throttle' | 'maxRetryDelaySeconds'>): Bot {
  const bot = new Bot(opts.token, { client: { apiRoot: opts.apiRoot ?? 'https://api.telegram.org' } });
  // Order matters: the throttler queues, auto-retry (installed last, so it runs first) retries
  // 429s after retry_after and 5xx with backoff underneath it. A network error is NOT retried
  // here: auto-retry would retry it without limit inside one delivery activity attempt, unseen and
  // deaf to shutdown; failing the attempt lets Temporal's retry policy retry it durably instead
  // (the polling loop has its own back-off).
  if (opts.throttle !== false) bot.api.config.use(apiThrottler(opts.throttle));
  bot.api.config.use(autoRetry({ maxRetryAttempts: 8, maxDelaySeconds: opts.maxRetryDelaySeconds ?? 60, rethrowHttpErrors: true }));
  return bot;
}

/**
 * Only the outbound side, registered as `telegram` (an `aivyx worker`; a gateway polls). It has no
 * streamed view of its own: the gateway's is closed through the turn record (`final`), and the
 * streamed message id comes from there too.
 */
export async function startTelegramOutbound(
  opts: Pick<
    TelegramChannelOptions,
    'token' | 'apiRoot' | 'throttle' | 'maxRetryDelaySeconds' | 'deliveries' | 'storage' | 'gateTokens' | 'log'
  >,
): Promise<{ stop(): Promise<void> }> {
  const bot = createBot(opts);
  // The bot's id is the token's first part: no getMe here, so a Telegram outage (or a revoked token)
  // fails deliveries, which Temporal retries, instead of keeping every worker from starting.
  const botId = Number(/^(\d+):/.exec(opts.token)?.[1]);
  if (!Number.isSafeInteger(botId))
    throw new AivyxError('Config', 'the Telegram bot token does not start with the bot id', { hint: 'a token looks like 123456:ABC-…' });
  const abort = new AbortController();
  const unregister = opts.deliveries.register(
    TELEGRAM_CHANNEL_NAME,
    createTelegramDeliverer({
      api: bot.api,
      botId,
      store: opts.storage,
      ...(opts.gateTokens ? { tokens: opts.gateTokens } : {}),
      closeStream: async () => undefined,
      signal: abort.signal,
      log: opts.log ?? ((line: string) => console.warn(`[telegram] ${line}`)),
    }),
  );
  return {
    async stop() {
      unregister();
      abort.abort();
    },
  };
}

/** Starts the Telegram channel; resolves once it is receiving updates. */
export async function startTelegramChannel(opts: TelegramChannelOptions): Promise<TelegramChannel> {
  const policy = { allowlist: opts.allowlist, ...(opts.chatTiers ? { chatTiers: opts.chatTiers } : {}) };
  validateTrustPolicy(policy);
  const log = opts.log ?? ((line: string) => console.warn(`[telegram] ${line}`));
  const apiRoot = opts.apiRoot ?? 'https://api.telegram.org';
  const editInterval = opts.editIntervalMs ?? 1000;
  const store = opts.storage;
  const bot = createBot(opts);

  let stopped = false;
  const abort = new AbortController();

  function tierOf(ctx: Context): TelegramTier {
    const chat = ctx.chat!;
    return resolveTelegramTier({ chatId: chat.id, chatType: chat.type, ...(ctx.from ? { senderId: ctx.from.id } : {}) }, policy);
  }

  const inbound = createTelegramInbound({
    bot,
    token: opts.token,
    apiRoot,
    signal: abort.signal,
    store,
    editInterval,
    gateway: opts.gateway,
    tierOf,
    ...(opts.missions ? { offerEvent: opts.missions.offerEvent.bind(opts.missions) } : {}),
    log,
    isStopped: () => stopped,
  });
  const decider = (ctx: Context, chat: DeciderChat) => deciderOf(ctx, chat, policy);
  bot.use(
    commandsComposer({
      store,
      gateway: opts.gateway,
      allowlist: policy.allowlist,
      tierOf,
      decider,
      ...(opts.missions ? { missions: opts.missions } : {}),
    }),
  );
  // Before the approval buttons: they answer every other callback as unrecognised.
  bot.use(missionsComposer({ store, decider, log, ...(opts.missionControl ? { control: opts.missionControl } : {}) }));
  bot.use(skillsComposer({ owners: opts.owner?.ids ?? [], ...(opts.owner?.skills ? { skills: opts.owner.skills } : {}) }));
  bot.use(
    buttonsComposer({
      decider,
      log,
      ...(opts.missions ? { missions: opts.missions } : {}),
      ...(opts.gateTokens ? { gateTokens: opts.gateTokens } : {}),
    }),
  );
  bot.on(['message', 'channel_post'], inbound.ingestMessage);

  await bot.init();
  // Final replies and gate notices: the worker's activities call this deliverer (same process in `aivyx up`).
  const unregister = opts.deliveries.register(
    TELEGRAM_CHANNEL_NAME,
    createTelegramDeliverer({
      api: bot.api,
      botId: bot.botInfo.id,
      store,
      ...(opts.gateTokens ? { tokens: opts.gateTokens } : {}),
      closeStream: inbound.closeStream,
      signal: abort.signal,
      log,
    }),
  );

  if (opts.mode === 'polling') {
    await bot.api.deleteWebhook();
    // Long polling with our own durable offset: an update is confirmed to Telegram (and the offset
    // stored) only after it is ingested, so a crash re-fetches it and the turn id dedupes it.
    // (`@grammyjs/runner` confirms updates as soon as they are fetched, which can lose one.)
    const loop = startCursorLoop<Update>({
      store,
      // Update ids are per bot: a new token starts a new sequence.
      cursorKey: `offset/${bot.botInfo.id}`,
      fetch: (offset, signal) =>
        bot.api.getUpdates(
          { offset, timeout: opts.pollTimeoutSeconds ?? 30, allowed_updates: ['message', 'channel_post', 'callback_query'] },
          signal as GrammySignal,
        ),
      handle: (u) => bot.handleUpdate(u),
      after: (u) => u.update_id + 1,
      describe: (u) => `update ${u.update_id}`,
      log,
    });
    return {
      async stop() {
        stopped = true;
        unregister();
        abort.abort();
        await loop.stop();
      },
    };
  }

  const { secretToken, port, host = '127.0.0.1', path = '/telegram/webhook' } = opts.mode.webhook;
  if (secretToken.length < 16) unregister();
  if (secretToken.length < 16)
    throw new AivyxError('Config', 'the Telegram webhook secret token is too short', { hint: 'use at least 16 random characters' });
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
}
