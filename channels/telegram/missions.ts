/**
 * `/missions` on Telegram: the sender's own missions (activities/owned-missions.ts decides whose),
 * with a Cancel button under each running one, and their recurring missions with Pause / Resume. Only in a private chat: a group would see another
 * person's mission goals. Who acts is always the verified update's user and the tier of the chat
 * (as for approvals), never the button: a button's callback data is a random handle to a sealed
 * record `tg-mc/<handle>` naming the action, the mission and the one user it was shown to, so a
 * forged or forwarded press names nothing, another user's press is refused, and the action itself is
 * checked again against the presser's ownership.
 */
import { randomBytes } from 'node:crypto';
import { Composer, type Context } from 'grammy';
import {
  cancelOwnMission,
  listOwnMissions,
  listOwnSchedules,
  setOwnSchedule,
  type OwnMission,
  type OwnSchedule,
} from '../../activities/owned-missions.js';
import type { MissionControlPort, ScheduleControlPort } from '../../activities/ports.js';
import { AivyxError } from '../../core/errors.js';
import type { MissionAsker } from '../../core/mission-owner.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import type { DeciderChat, InlineKeyboard, TelegramDecider } from './approvals.js';
import { editText } from './delivery.js';

/** How many missions `/missions` shows (newest first). */
export const MISSIONS_SHOWN = 10;
/** How long a Cancel button works after the list was sent. */
export const CANCEL_BUTTON_TTL_MS = 24 * 3600_000;

const CALLBACK = /^mc:([A-Za-z0-9_-]{22})$/;

/** What a button stands for (sealed in the channel's state). */
interface MissionButton {
  action: 'cancel' | 'pause' | 'resume';
  /** The mission (cancel) or the recurring mission's schedule id (pause, resume). */
  target: string;
  /** The Telegram user the list was sent to: the only one who may press. */
  userId: number;
  expiresAt: number;
}

const buttonKey = (handle: string): string => `tg-mc/${handle}`;

export interface MissionCommandDeps {
  control?: MissionControlPort & ScheduleControlPort;
  store: DomainHandle;
  decider(ctx: Context, chat: DeciderChat): TelegramDecider | undefined;
  log(line: string): void;
  now?: () => number;
}

const askerOf = (who: TelegramDecider): MissionAsker => ({
  identity: String(who.userId),
  channel: 'telegram',
  trustTier: who.trustTier,
  local: false,
});

/** One recurring mission as a line: id, paused or its next run. */
function scheduleLine(s: OwnSchedule): string {
  return `• ${s.goal.slice(0, 80)}\n  ${s.scheduleId} — ${s.paused ? 'paused' : `next run ${s.next ?? '?'}`}`;
}

/** One mission as a line: id, state, and what it waits for. */
function missionLine(m: OwnMission): string {
  const state = m.state ?? m.status.toLowerCase();
  return `• ${m.goal.slice(0, 80)}\n  ${m.missionId} — ${state}${m.waiting ? ` (waiting for ${m.waiting})` : ''}`;
}

export function missionsComposer(deps: MissionCommandDeps): Composer<Context> {
  const composer = new Composer<Context>();
  const now = deps.now ?? Date.now;

  composer.command('missions', async (ctx) => {
    if (ctx.chat.type !== 'private') return void (await ctx.reply('Ask me for /missions in a private chat.'));
    if (!deps.control) return void (await ctx.reply('Missions are not available on this bot.'));
    const who = deps.decider(ctx, ctx.chat);
    if (!who || who.trustTier === 'Untrusted') return void (await ctx.reply('You have no missions here.'));
    const asker = askerOf(who);
    let mine: OwnMission[];
    let recurring: OwnSchedule[];
    try {
      [mine, recurring] = await Promise.all([
        listOwnMissions(deps.control, asker, { limit: MISSIONS_SHOWN }),
        listOwnSchedules(deps.control, asker, MISSIONS_SHOWN),
      ]);
    } catch (err) {
      deps.log(`/missions: ${(err as Error).message}`);
      return void (await ctx.reply('Could not list your missions right now. Try again shortly.'));
    }
    if (mine.length === 0 && recurring.length === 0) return void (await ctx.reply('You have no missions.'));
    const rows: InlineKeyboard['inline_keyboard'] = [];
    const button = async (action: MissionButton['action'], target: string, text: string): Promise<void> => {
      const handle = randomBytes(16).toString('base64url');
      const record: MissionButton = { action, target, userId: who.userId, expiresAt: now() + CANCEL_BUTTON_TTL_MS };
      await deps.store.putJson(buttonKey(handle), record);
      rows.push([{ text, callback_data: `mc:${handle}` }]);
    };
    for (const m of mine) if (m.status === 'RUNNING') await button('cancel', m.missionId, `Cancel: ${m.goal.slice(0, 40)}`);
    for (const r of recurring)
      await button(r.paused ? 'resume' : 'pause', r.scheduleId, `${r.paused ? 'Resume' : 'Pause'}: ${r.goal.slice(0, 40)}`);
    const text = [
      ...(mine.length > 0 ? ['Your missions:', ...mine.map(missionLine)] : []),
      ...(recurring.length > 0 ? ['Your recurring missions:', ...recurring.map(scheduleLine)] : []),
    ].join('\n');
    await ctx.reply(text, rows.length > 0 ? { reply_markup: { inline_keyboard: rows } } : {});
  });

  composer.callbackQuery(CALLBACK, async (ctx) => {
    const q = ctx.callbackQuery;
    let answer = 'This button is not recognised.';
    try {
      const handle = CALLBACK.exec(q.data)![1]!;
      const button = await deps.store.getJson<MissionButton>(buttonKey(handle));
      if (!button || button.expiresAt < now()) {
        answer = 'Refused: this button has expired; send /missions again.';
        return;
      }
      if (button.userId !== q.from.id) {
        answer = 'Refused: this button is for someone else.';
        return;
      }
      const who = deps.decider(ctx, q.message?.chat);
      if (!who || !deps.control) return;
      const asker = askerOf(who);
      if (button.action === 'cancel') {
        const done = await cancelOwnMission(deps.control, asker, button.target, `cancelled on Telegram by ${who.userId}`);
        answer = done.result === 'cancelled' ? `Cancelled mission ${done.missionId}.` : `Mission ${done.missionId} was already cancelled.`;
      } else {
        const done = await setOwnSchedule(deps.control, asker, button.target, button.action);
        answer = `${done.paused ? 'Paused' : 'Resumed'} recurring mission ${done.scheduleId}.`;
      }
      await deps.store.delete(buttonKey(handle));
      if (q.message) await editText(ctx.api, q.message.chat.id, q.message.message_id, `${q.message.text ?? ''}\n\n${answer}`);
    } catch (err) {
      answer =
        err instanceof AivyxError && (err.kind === 'NotFound' || err.kind === 'CapabilityDenied')
          ? `Refused: ${err.message}`
          : 'Something went wrong; nothing changed.';
      if (!(err instanceof AivyxError)) deps.log(`mission cancel ${q.id}: ${(err as Error).message}`);
    } finally {
      await ctx
        .answerCallbackQuery({ text: answer, show_alert: answer.startsWith('Refused') })
        .catch((err: unknown) => deps.log(`answerCallbackQuery: ${(err as Error).message}`));
    }
  });
  return composer;
}
