/** Text the Telegram channel shows: streamed views, outcome messages, splitting at 4,096 characters. */
import type { TurnOutcome } from '../../core/outcomes.js';
import { outcomeReplyText } from '../outcome-text.js';

/** Telegram's limit on one message's text, in characters (UTF-16 code units, as the Bot API counts). */
export const TELEGRAM_MAX_TEXT = 4096;

/** Splits `text` into pieces of at most `max` characters, preferring line then word boundaries. */
export function splitMessage(text: string, max = TELEGRAM_MAX_TEXT): string[] {
  if (text.length === 0) return ['(empty reply)'];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf('\n', max);
    if (cut < max / 2) cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) cut = max;
    // Never cut a surrogate pair in half.
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut--;
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^[\n ]/, '');
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

/** The streamed view while a turn runs: text so far (the tail past the limit is elided) plus tool lines. */
export function streamView(text: string, statusLines: readonly string[]): string {
  const status = statusLines.slice(-5).join('\n');
  const room = TELEGRAM_MAX_TEXT - status.length - 4;
  let body = text.length > 0 ? text : '…';
  if (body.length > room) body = `${body.slice(0, room - 1)}…`;
  return status.length > 0 ? `${body}\n\n${status}` : body;
}

/** The final reply of a turn in Telegram (the approval hint names the text fallback of the buttons). */
export function outcomeText(outcome: TurnOutcome, turnId: string): string {
  return outcomeReplyText(outcome, turnId, (gateId) => ` If you are one of them: the buttons on the request, or /approve ${gateId}.`);
}
