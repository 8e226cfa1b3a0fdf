/**
 * The owner's inbox: replies that could not reach the channel they were asked on (a Telegram chat
 * that blocked the bot, a mail server that refused the thread, a channel not running), sealed in
 * the `sessions` domain beside the conversation they belong to. Keys sort by time, so a scan lists
 * them oldest first; the id is derived from the turn id, so holding the same turn again overwrites.
 */
import { createHash } from 'node:crypto';
import { AivyxError } from '../core/errors.js';
import type { HeldReply, InboxPort } from '../activities/ports.js';
import type { DomainHandle } from './storage/index.js';

const PREFIX = 'inbox/';

/** The short id of a held reply: 12 hex digits of the turn id's SHA-256 (typed at a prompt). */
export function heldReplyId(turnId: string): string {
  return createHash('sha256').update(turnId).digest('hex').slice(0, 12);
}

const keyOf = (r: Pick<HeldReply, 'at' | 'id'>) => `${PREFIX}${String(Math.max(0, Math.floor(r.at))).padStart(15, '0')}/${r.id}`;

/** An `InboxPort` over the sealed `sessions` domain. */
export function createInbox(sessions: DomainHandle): InboxPort {
  const entries = async (): Promise<Array<{ key: string; reply: HeldReply }>> => {
    const out: Array<{ key: string; reply: HeldReply }> = [];
    for await (const { key, value } of sessions.scan(PREFIX))
      out.push({ key, reply: JSON.parse(new TextDecoder().decode(value)) as HeldReply });
    return out;
  };
  return {
    async hold(reply) {
      const held: HeldReply = { id: heldReplyId(reply.turnId), ...reply };
      await sessions.putJson(keyOf(held), held);
      return held;
    },
    async list() {
      return (await entries()).map((e) => e.reply);
    },
    async dismiss(id) {
      if (!/^[0-9a-f]{4,12}$/.test(id))
        throw new AivyxError('InvalidScope', `"${id}" is not an inbox id`, { hint: 'use the id `aivyx inbox` shows (4 to 12 hex digits)' });
      const matches = (await entries()).filter((e) => e.reply.id.startsWith(id));
      if (matches.length > 1)
        throw new AivyxError('InvalidScope', `"${id}" matches ${matches.length} inbox entries`, { hint: 'give more of the id' });
      if (matches.length === 0) return false;
      return sessions.delete(matches[0]!.key);
    },
  };
}
