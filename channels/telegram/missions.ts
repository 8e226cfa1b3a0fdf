/**
 * `/missions` on Telegram: the sender's own missions (activities/owned-missions.ts decides whose),
 * with a Cancel button under each running one. Only in a private chat: a group would see another
 * person's mission goals. Who acts is always the verified update's user and the tier of the chat
 * (as for approvals), never the button: a button's callback data is a random handle to a sealed
 * record `tg-mc/<handle>` naming the mission and the one user it was shown to, so a forged or
 * forwarded press names nothing, another user's press is refused, and the cancel itself is checked
 * again against the presser's ownership.
 */
import { randomBytes } from 'node:crypto';
import { Composer, type Context } from 'grammy';
import { cancelOwnMission, listOwnMissions, type OwnMission } from '../../activities/owned-missions.js';
import type { MissionControlPort } from '../../activities/ports.js';
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

/** What a Cancel button stands for (sealed in the channel's state). */
interface CancelButton {
  missionId: string;
  /** The Telegram user the list was sent to: the only one who may press. */
  userId: number;
  expiresAt: number;
}

const buttonKey = (handle: string): string => `tg-mc/${handle}`;

export interface MissionCommandDeps {
  control?: MissionControlPort;
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
    let mine: OwnMission[];
    try {
      mine = await listOwnMissions(deps.control, askerOf(who), { limit: MISSIONS_SHOWN });
    } catch (err) {
      deps.log(`/missions: ${(err as Error).message}`);
      return void (await ctx.reply('Could not list your missions right now. Try again shortly.'));
    }
    if (mine.length === 0) return void (await ctx.reply('You have no missions.'));
    const rows: InlineKeyboard['inline_keyboard'] = [];
    for (const m of mine) {
      if (m.status !== 'RUNNING') continue;
      const handle = randomBytes(16).toString('base64url');
      await deps.store.putJson(buttonKey(handle), {
        missionId: m.missionId,
        userId: who.userId,
        expiresAt: now() + CANCEL_BUTTON_TTL_MS,
      } satisfies CancelButton);
      rows.push([{ text: `Cancel: ${m.goal.slice(0, 40)}`, callback_data: `mc:${handle}` }]);
    }
    await ctx.reply(
      ['Your missions:', ...mine.map(missionLine)].join('\n'),
      rows.length > 0 ? { reply_markup: { inline_keyboard: rows } } : {},
    );
  });

  composer.callbackQuery(CALLBACK, async (ctx) => {
    const q = ctx.callbackQuery;
    let answer = 'This button is not recognised.';
    try {
      const handle = CALLBACK.exec(q.data)![1]!;
      const button = await deps.store.getJson<CancelButton>(buttonKey(handle));
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
      const done = await cancelOwnMission(deps.control, askerOf(who), button.missionId, `cancelled on Telegram by ${who.userId}`);
      await deps.store.delete(buttonKey(handle));
      answer = done.result === 'cancelled' ? `Cancelled mission ${done.missionId}.` : `Mission ${done.missionId} was already cancelled.`;
      if (q.message) await editText(ctx.api, q.message.chat.id, q.message.message_id, `${q.message.text ?? ''}\n\n${answer}`);
    } catch (err) {
      answer =
        err instanceof AivyxError && (err.kind === 'NotFound' || err.kind === 'CapabilityDenied')
          ? `Refused: ${err.message}`
          : 'Something went wrong; nothing was cancelled.';
      if (!(err instanceof AivyxError)) deps.log(`mission cancel ${q.id}: ${(err as Error).message}`);
    } finally {
      await ctx
        .answerCallbackQuery({ text: answer, show_alert: answer.startsWith('Refused') })
        .catch((err: unknown) => deps.log(`answerCallbackQuery: ${(err as Error).message}`));
    }
  });
  return composer;
}
