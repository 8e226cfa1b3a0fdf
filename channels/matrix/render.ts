/** Text the Matrix channel shows: streamed views, approval requests, outcome messages, splitting long text. */
import type { MissionNotice } from '../../activities/mission-activities.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { approvalRequestLines } from '../approval-text.js';
import { outcomeReplyText } from '../outcome-text.js';

/** How much text one event carries (events are limited to 64 KiB; leave room for the envelope). */
export const MATRIX_MAX_TEXT = 16_000;

/** Reactions that approve and deny a request. */
export const APPROVE_KEYS: readonly string[] = ['✅', '👍', '✔️'];
export const DENY_KEYS: readonly string[] = ['❌', '👎', '✖️'];

/** Splits `text` into pieces of at most `max` characters, at a line break where one is near. */
export function splitText(text: string, max = MATRIX_MAX_TEXT): string[] {
  if (text.length === 0) return ['(empty reply)'];
  const parts: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf('\n', max);
    if (cut < max / 2) cut = max;
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^\n/, '');
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

/** The streamed view while a turn runs: text so far plus the last tool lines. */
export function streamView(text: string, statusLines: readonly string[]): string {
  const body = (text.length > 0 ? text : '…').slice(0, MATRIX_MAX_TEXT - 600);
  const status = statusLines.slice(-5).join('\n');
  return status.length > 0 ? `${body}\n\n${status}` : body;
}

/** The final reply of a turn. */
export function outcomeText(outcome: TurnOutcome, turnId: string): string {
  return outcomeReplyText(outcome, turnId, (gateId) => ` If you are one of them: react ✅ to the request, or !approve ${gateId}.`);
}

/** An approval request: the shared lines (channels/approval-text.ts) and how to answer on Matrix. */
export function requestText(n: MissionNotice): string {
  const how = `React ✅ to approve or ❌ to deny (only the person this was sent to counts), or send !approve ${n.gateId} / !deny ${n.gateId} <reason>.`;
  return [...approvalRequestLines(n), '', how].join('\n').slice(0, MATRIX_MAX_TEXT);
}

/** A closing notice (decided, expired, withdrawn). */
export function closedText(n: MissionNotice): string {
  return `Gate ${n.gateId} (${n.tool ?? '?'}, mission ${n.missionId}): ${n.text}`;
}

/** An instant as `2026-12-02 15:40:01 UTC`. */
export function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
