/**
 * Mission approvals on Telegram: the request text and its Approve / Deny buttons, the callback
 * data format (`a:<token>` / `d:<token>`, a GateTokens token of 36 characters, well under the
 * 64-byte limit), and the decision logic shared by buttons and `/approve`, `/deny`.
 *
 * The approver's identity and tier always come from the verified update (the presser's user id,
 * the chat the button sits in), never from the token or the text; the mission's Update validator
 * checks both again.
 */
import { approvalRequestLines } from '../approval-text.js';
import type { MissionNotice } from '../../activities/mission-activities.js';
import { AivyxError } from '../../core/errors.js';
import { inputDigest } from '../../core/tools/describe-call.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import type { GateDecisionPort, GateTokenPort, MissionEventPort, MissionStatusPort } from '../ports.js';
import { checkApprovalToken } from '../kit/approve-by-token.js';
import { TELEGRAM_MAX_TEXT } from './render.js';
import { openGatesKey, type OpenGates } from './state.js';
import type { Context } from 'grammy';
import { resolveTelegramTier, type TelegramTier, type TelegramTrustPolicy } from './trust.js';

/** What the channel needs of the mission gateway (a `MissionGateway` satisfies it). */
export type TelegramMissionPort = GateDecisionPort & MissionStatusPort & MissionEventPort;

/** A decision kind. */
export type GateDecisionKind = 'approve' | 'deny';

/** An inline keyboard as the Bot API takes it. */
export interface InlineKeyboard {
  inline_keyboard: { text: string; callback_data: string }[][];
}

const CALLBACK = /^([ad]):(\S{1,62})$/;

/** The callback data of a button: `a:<token>` approves, `d:<token>` denies. */
export function callbackData(kind: GateDecisionKind, token: string): string {
  return `${kind === 'approve' ? 'a' : 'd'}:${token}`;
}

/** Parses callback data written by `callbackData`; undefined for anything else. */
export function parseCallbackData(data: string | undefined): { kind: GateDecisionKind; token: string } | undefined {
  const m = CALLBACK.exec(data ?? '');
  if (!m?.[1] || !m[2]) return undefined;
  return { kind: m[1] === 'a' ? 'approve' : 'deny', token: m[2] };
}

/** The Approve / Deny keyboard for one approver's token. */
export function approvalKeyboard(token: string): InlineKeyboard {
  return {
    inline_keyboard: [
      [
        { text: 'Approve', callback_data: callbackData('approve', token) },
        { text: 'Deny', callback_data: callbackData('deny', token) },
      ],
    ],
  };
}

/** An instant as `2026-12-02 15:40:01 UTC`. */
export function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export { inputDigest };

/**
 * The text of an approval request (opened, reminder, escalated): the call as it will run (its
 * canonical input, secrets redacted), why, who asked where, and the digest tying it to the audit log.
 */
export function requestText(n: MissionNotice): string {
  return fitMessage([...approvalRequestLines(n), '', `Press a button, or reply /approve ${n.gateId} or /deny ${n.gateId} <reason>.`]);
}

/** `lines` joined, the longest ones cut until the whole fits one Telegram message (a request cannot be split: it carries the buttons). */
function fitMessage(lines: string[], max = TELEGRAM_MAX_TEXT): string {
  const out = lines.slice();
  while (out.join('\n').length > max) {
    const i = out.reduce((best, l, j) => (l.length > (out[best] ?? '').length ? j : best), 0);
    const line = out[i]!;
    // Halving a line over 160 characters always shortens it, so this ends. Its head and its tail stay:
    // the end of a value quoted in "Why" is where a payload past a URL's first characters would be.
    if (line.length <= 160) break;
    const quarter = Math.floor(line.length / 4);
    out[i] = `${line.slice(0, quarter)}… (cut) …${line.slice(-quarter)}`;
  }
  return out.join('\n');
}

/** The text of a closing notice (decided, expired, withdrawn). */
export function closedText(n: MissionNotice): string {
  return `Gate ${n.gateId} (${n.tool ?? '?'}, mission ${n.missionId}): ${n.text}`;
}

/** The verified facts of the person deciding. */
export interface TelegramDecider {
  /** Telegram user id (from the update). */
  userId: number;
  /** Shown in "Approved by …". */
  name: string;
  /** The tier of the chat the decision was made in, from the update. */
  trustTier: TelegramTier;
}

/** What a decision attempt came to. */
export type DecisionResult = { ok: true; line: string } | { ok: false; line: string };

/** Decides `gateId` as `who` through the mission gateway; a refusal is a line to show, never a throw. */
export async function decideGate(
  missions: TelegramMissionPort,
  kind: GateDecisionKind,
  gateId: string,
  who: TelegramDecider,
  reason?: string,
): Promise<DecisionResult> {
  try {
    await missions.decideAs(kind, gateId, { identity: String(who.userId), channel: 'telegram', trustTier: who.trustTier }, reason);
    return { ok: true, line: `${kind === 'approve' ? 'Approved' : 'Denied'} by ${who.name} at ${utc(Date.now())}` };
  } catch (err) {
    if (!(err instanceof AivyxError))
      return { ok: false, line: 'Could not reach the mission right now; nothing was decided. Try again shortly.' };
    // A finished mission refuses every update: say so plainly.
    if (/already completed|not found/i.test(err.message))
      return { ok: false, line: `Refused: gate ${gateId} is closed (the mission has ended); nothing changed.` };
    return { ok: false, line: `Refused: ${err.message}` };
  }
}

/** Why a button press is refused before any decision is sent, or the grant it carries. */
export async function checkPress(
  tokens: GateTokenPort,
  token: string,
  presserId: number,
): Promise<{ ok: true; gateId: string } | { ok: false; line: string; foreignGate?: string }> {
  const v = await checkApprovalToken(tokens, token, 'telegram', String(presserId));
  if (v.ok) return { ok: true, gateId: v.gateId };
  if (v.why === 'invalid' || v.why === 'other-channel') return { ok: false, line: `Refused: ${v.reason}.` };
  if (v.why === 'used')
    return { ok: false, line: v.used ? `Already decided (${v.used.decision} at ${utc(v.used.at)}).` : `Refused: ${v.reason}.` };
  return { ok: false, line: 'Refused: this approval is for someone else.', ...('gateId' in v ? { foreignGate: v.gateId } : {}) };
}

/**
 * `/status` lines: the gates `userId` was asked about (the deliverer's `tg-open/` index — local,
 * so no fan-out over every waiting mission), each confirmed open by the mission's status query.
 */
export async function openGatesFor(store: DomainHandle, missions: TelegramMissionPort, userId: number): Promise<string[]> {
  const lines: string[] = [];
  const index = (await store.getJson<OpenGates>(openGatesKey(String(userId))))?.gates ?? [];
  for (const g of index) {
    try {
      const s = await missions.show(g.missionId);
      if (s.gate?.gateId !== g.gateId || !['open', 'reminded', 'escalated'].includes(s.gate.state)) continue;
      lines.push(`• ${g.gateId} — ${g.tool}, input ${g.digest}`);
    } catch {
      // A mission that is gone has no open gate.
    }
  }
  return lines;
}

/** The presser/sender as a decider: id and tier from the update, never from text or token. */
/** The chat a decision is made in (from the update). */
export type DeciderChat = { id: number; type: 'private' | 'group' | 'supergroup' | 'channel' } | undefined;

export function deciderOf(ctx: Context, chat: DeciderChat, policy: TelegramTrustPolicy): TelegramDecider | undefined {
  const from = ctx.from;
  if (!from) return undefined;
  const trustTier: TelegramTier = chat
    ? resolveTelegramTier({ chatId: chat.id, chatType: chat.type, senderId: from.id }, policy)
    : 'Untrusted';
  return { userId: from.id, name: from.username ? `${from.first_name} (@${from.username})` : from.first_name, trustTier };
}
