/** Telegram's Approve / Deny buttons, as a grammY Composer: the press is checked, bound to the presser, then decided. */
import { Composer, type Context } from 'grammy';
import type { GateTokenPort } from '../ports.js';
import {
  checkPress,
  decideGate,
  parseCallbackData,
  type DeciderChat,
  type TelegramDecider,
  type TelegramMissionPort,
} from './approvals.js';
import { editText } from './delivery.js';

export interface ButtonDeps {
  missions?: TelegramMissionPort;
  gateTokens?: GateTokenPort;
  /** The presser as a decider: id and tier from the update, never from text or token. */
  decider(ctx: Context, chat: DeciderChat): TelegramDecider | undefined;
  log(line: string): void;
}

export function buttonsComposer(deps: ButtonDeps): Composer<Context> {
  const composer = new Composer<Context>();
  /** A button press: answered always; token verified and bound to the presser before any decision. */
  async function onCallback(ctx: Context): Promise<void> {
    const q = ctx.callbackQuery!;
    let answer = 'This button is not recognised.';
    try {
      const parsed = parseCallbackData(q.data);
      if (!parsed) return;
      if (!deps.missions || !deps.gateTokens) {
        answer = 'Approvals are not enabled on this bot.';
        return;
      }
      const press = await checkPress(deps.gateTokens, parsed.token, q.from.id);
      if (!press.ok) {
        answer = press.line;
        // Someone pressing a button sent to another person: refused, and audited as an attempt on that gate.
        if (press.foreignGate)
          await deps.missions.rejectDecision({
            gateId: press.foreignGate,
            kind: parsed.kind,
            approver: { identity: String(q.from.id), channel: 'telegram' },
            reason: 'a button sent to someone else',
            eventId: q.id,
          });
        return;
      }
      const who = deps.decider(ctx, q.message?.chat);
      if (!who) return;
      const result = await decideGate(deps.missions, parsed.kind, press.gateId, who);
      answer = result.line;
      if (!result.ok) return;
      await deps.gateTokens.markUsed(parsed.token, parsed.kind);
      if (q.message) await editText(ctx.api, q.message.chat.id, q.message.message_id, `${result.line}\nGate: ${press.gateId}`);
    } catch (err) {
      deps.log(`callback ${q.id}: ${(err as Error).message}`);
      answer = 'Something went wrong; nothing was decided.';
    } finally {
      await ctx
        .answerCallbackQuery({ text: answer, show_alert: answer.startsWith('Refused') })
        .catch((err: unknown) => deps.log(`answerCallbackQuery: ${(err as Error).message}`));
    }
  }
  composer.on('callback_query', onCallback);
  return composer;
}
