/**
 * `aivyx inbox [--json]` and `aivyx inbox dismiss ID`: the replies that could not reach the chat or
 * thread they were asked in (a blocked bot, a refused mail), kept sealed for the owner, through the
 * running `aivyx up`'s REST channel.
 */
import { parseArgs } from 'node:util';
import type { HeldReply } from '../../activities/ports.js';
import { AivyxError } from '../../core/errors.js';
import { outcomeReplyText } from '../outcome-text.js';
import { restJson, type RestTarget } from './rest-client.js';

export const INBOX_USAGE = `usage:
  aivyx inbox [--json]     notices for you and replies that could not be delivered, oldest first
  aivyx inbox dismiss ID   remove one (its id, or the start of it)`;

/**
 * A mission's notice to an owner with no chat to send it to (a mission created on the CLI): the inbox is
 * where it goes, not where it was left after a failure (workflows/mission-workflow.ts holds it with this reason).
 */
const NOTICE_FOR_YOU = /^a notice from mission (\S+)$/;

/** Why an entry is here, in words: a notice for you, or a reply its chat did not take (and why). */
function whyHere(r: HeldReply): string {
  const notice = NOTICE_FOR_YOU.exec(r.reason);
  return notice && r.turnId.endsWith('/notice') ? `notice from mission ${notice[1]!}` : `not delivered to ${r.channel}: ${r.reason}`;
}

/** One inbox entry as the owner reads it: when, what it is (a notice, or a reply that did not reach its chat), then the text. */
export function inboxEntryText(r: HeldReply): string {
  const text = outcomeReplyText(r.outcome, r.turnId).replace(/\n/g, '\n  ');
  return `${r.id}  ${new Date(r.at).toISOString()}  ${whyHere(r)} (turn ${r.turnId})\n  ${text}\n`;
}

/** Runs `inbox [--json]` or `inbox dismiss ID` against `target`; returns the exit code. */
export async function runInboxCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const [sub, ...rest] = positionals;
  if (sub === undefined) {
    const { replies } = (await restJson(target, 'GET', '/v1/inbox')) as { replies: HeldReply[] };
    if (values.json) out(replies.map((r) => `${JSON.stringify(r)}\n`).join(''));
    else out(replies.length === 0 ? 'the inbox is empty\n' : replies.map(inboxEntryText).join('\n'));
    return 0;
  }
  if (sub !== 'dismiss' || rest.length !== 1)
    throw new AivyxError('Config', sub === 'dismiss' ? 'inbox dismiss needs exactly one id' : `unknown inbox command "${sub}"`, {
      hint: INBOX_USAGE,
    });
  const { dismissed } = (await restJson(target, 'POST', `/v1/inbox/${encodeURIComponent(rest[0]!)}/dismiss`)) as { dismissed: boolean };
  out(dismissed ? 'dismissed\n' : 'no such inbox entry\n');
  return dismissed ? 0 : 1;
}
