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
  aivyx inbox [--json]     replies that could not be delivered, oldest first
  aivyx inbox dismiss ID   remove one (its id, or the start of it)`;

/** One held reply as the owner reads it: when, where it was for, why it is here, then the reply. */
export function inboxEntryText(r: HeldReply): string {
  const text = outcomeReplyText(r.outcome, r.turnId).replace(/\n/g, '\n  ');
  return `${r.id}  ${new Date(r.at).toISOString()}  for ${r.channel} (turn ${r.turnId})\n  not delivered: ${r.reason}\n  ${text}\n`;
}

export async function runInboxCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const [sub, ...rest] = positionals;
  if (sub === undefined) {
    const { replies } = (await restJson(target, 'GET', '/v1/inbox')) as { replies: HeldReply[] };
    if (values.json) out(replies.map((r) => `${JSON.stringify(r)}\n`).join(''));
    else out(replies.length === 0 ? 'the inbox is empty: every reply reached its chat\n' : replies.map(inboxEntryText).join('\n'));
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
