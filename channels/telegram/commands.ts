/** Telegram's commands (/help, /status, /cancel, /clear, /approve, /deny) as a grammY Composer. */
import { Composer, type Context } from 'grammy';
import type { DomainHandle } from '../../infra/storage/index.js';
import { CLEAR_COMMAND, type SessionClearPort, type TurnCancelPort } from '../ports.js';
import { decideGate, openGatesFor, type DeciderChat, type TelegramDecider, type TelegramMissionPort } from './approvals.js';
import { TELEGRAM_CHANNEL_NAME, telegramMessageId, telegramSessionId } from './inbound.js';
import { turnKey, type ChatState, type TurnRecord } from './state.js';
import type { TelegramTier } from './trust.js';

const HELP = [
  'I am your aivyx assistant. Send me a message, a photo or a document.',
  '/status — what I am doing in this chat, and approvals waiting for you',
  '/cancel — stop the running request',
  '/clear — start a new conversation: I forget what was said in this chat (not my memory)',
  '/approve <gate id>, /deny <gate id> [reason] — answer an approval request (or press its buttons)',
  '/missions — your missions, with a button to cancel each (in a private chat)',
  '/skills, /skill <name>, /skilledit <name>, /retire <name> — the skills you approved (the owner, in a private chat)',
  '/help — this text',
].join('\n');

export interface CommandDeps {
  store: DomainHandle;
  gateway: TurnCancelPort & SessionClearPort;
  missions?: TelegramMissionPort;
  /** Users who may cancel anyone's request in a group. */
  allowlist: readonly number[];
  tierOf(ctx: Context): TelegramTier;
  decider(ctx: Context, chat: DeciderChat): TelegramDecider | undefined;
}

export function commandsComposer(deps: CommandDeps): Composer<Context> {
  const composer = new Composer<Context>();
  composer.command(['start', 'help'], (ctx) => ctx.reply(HELP));
  composer.command('status', async (ctx) => {
    const s = (await deps.store.getJson<ChatState>(`chat/${ctx.chat.id}`)) ?? { open: [] };
    const lines = [
      `Trust tier here: ${deps.tierOf(ctx)}. ${s.open.length === 0 ? 'Nothing running.' : `${s.open.length} request(s) in progress.`}`,
    ];
    if (deps.missions && ctx.from) {
      const gates = await openGatesFor(deps.store, deps.missions, ctx.from.id).catch(() => undefined);
      if (gates === undefined) lines.push('Could not list approvals right now.');
      else lines.push(gates.length === 0 ? 'No approvals waiting for you.' : ['Approvals waiting for you:', ...gates].join('\n'));
    }
    await ctx.reply(lines.join('\n'));
  });
  composer.command('cancel', async (ctx) => {
    const s = (await deps.store.getJson<ChatState>(`chat/${ctx.chat.id}`)) ?? { open: [] };
    const running = s.open[0];
    if (!running) return void (await ctx.reply('Nothing to cancel.'));
    const rec = await deps.store.getJson<TurnRecord>(turnKey(running));
    // In a group only the sender of the request (or an allowlisted user) may cancel it.
    const from = ctx.from?.id;
    if (rec && from !== undefined && rec.sender !== String(from) && !deps.allowlist.includes(from))
      return void (await ctx.reply('Only the person who asked can cancel that.'));
    await deps.gateway.cancel(running);
    await ctx.reply('Cancelling…');
  });
  // Anyone whose messages reach this chat's conversation may clear it: that only removes context (a
  // group's shared one too), it grants nothing, and their own next message is as untrusted as before.
  composer.command(CLEAR_COMMAND.slice(1), async (ctx) => {
    const { id: botId } = ctx.me;
    const { chat } = ctx;
    const channel = {
      name: TELEGRAM_CHANNEL_NAME,
      platform: 'Telegram' as const,
      trustTier: deps.tierOf(ctx),
      sessionId: telegramSessionId(botId, chat.id),
      sender: String(ctx.from?.id ?? chat.id),
    };
    const { text } = await deps.gateway.clearSession(channel, telegramMessageId(botId, chat.id, ctx.msg.message_id));
    await ctx.reply(text);
  });
  composer.command(['approve', 'deny'], async (ctx) => {
    const kind = ctx.message?.text?.startsWith('/approve') ? 'approve' : 'deny';
    if (!deps.missions) return void (await ctx.reply('There is nothing to approve here yet.'));
    const [gateId, ...rest] = String(ctx.match ?? '')
      .trim()
      .split(/\s+/);
    if (!gateId) return void (await ctx.reply(`Usage: /${kind} <gate id>${kind === 'deny' ? ' [reason]' : ''} (see /status)`));
    const who = deps.decider(ctx, ctx.chat);
    if (!who) return void (await ctx.reply('I cannot tell who you are here.'));
    const reason = rest.join(' ').trim();
    const result = await decideGate(deps.missions, kind, gateId, who, reason || undefined);
    await ctx.reply(result.ok ? `${result.line} (gate ${gateId})` : result.line);
  });
  return composer;
}
