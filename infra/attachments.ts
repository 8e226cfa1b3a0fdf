/**
 * Attachments at rest: the bytes of a file a turn hands over (`fs.attach`), sealed like every
 * channel's state (the `channel_state` domain: XChaCha20-Poly1305 under its subkey, the row key as
 * associated data), and bound to the conversation that asked. Workflows only ever see the handle.
 *
 *   attachment/meta/<id>                        the handle and its binding (channel, session, turn), its time
 *   attachment/bytes/<id>                       the file
 *   attachment/turn/<encoded turn id>/<id>      the turn's attachments, for its reply
 *   attachment/call/<sha256 of the call key>    the attachment a tool call made (a retry makes none anew)
 *
 * Who may fetch one: only the channel and session it was made for (`get` answers undefined for any
 * other, the same as for an id that does not exist, so a guessed id tells nothing), and only until
 * it expires (`ttlMs` after it was stored; the same answer again). `sweep` deletes expired ones,
 * `forgetSession` a session's (`/clear`).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AttachmentRef } from '../core/attachments.js';
import type { AttachmentSink, AttachmentSource, AttachmentBinding } from '../activities/tools/attachment-port.js';
import type { DomainHandle } from './storage/index.js';

/** What deletes attachments: the expiry sweep and `/clear`. */
export interface AttachmentForgetting {
  /** Deletes every attachment stored longer ago than the expiry; how many. */
  sweep(): Promise<number>;
  /** Deletes every attachment of `channel`'s session `sessionId` (and no other's); how many. */
  forgetSession(channel: string, sessionId: string): Promise<number>;
}

/** Both sides over one store, and its deleting. */
export type AttachmentStore = AttachmentSink & AttachmentSource & AttachmentForgetting;

/** How long an attachment is kept by default: see `AIVYX_ATTACHMENT_TTL` (infra/config/env-table.ts). */
export const DEFAULT_ATTACHMENT_TTL_MS = 30 * 86_400_000;

export interface AttachmentStoreOptions {
  /** How long after it was stored an attachment is served, then swept. */
  ttlMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/** `createdAt`: ms since the epoch; a row from before expiry existed has none and counts as expired. */
type Meta = AttachmentRef & AttachmentBinding & { createdAt?: number };

const ID = /^[0-9a-f]{32}$/;
const META = 'attachment/meta/';
const CALL = 'attachment/call/';
const turnPrefix = (turnId: string) => `attachment/turn/${encodeURIComponent(turnId)}/`;
const callKeyOf = (callKey: string) => `${CALL}${createHash('sha256').update(callKey).digest('hex')}`;
const refOf = (m: Meta): AttachmentRef => ({ id: m.id, name: m.name, mime: m.mime, size: m.size });
const parsed = (value: Uint8Array) => JSON.parse(Buffer.from(value).toString('utf8')) as Meta;

/** The attachment store over a `channel_state` handle. */
export function createAttachmentStore(state: DomainHandle, opts: AttachmentStoreOptions = {}): AttachmentStore {
  const ttlMs = opts.ttlMs ?? DEFAULT_ATTACHMENT_TTL_MS;
  const now = opts.now ?? Date.now;
  const live = (m: Meta) => (m.createdAt ?? 0) + ttlMs > now();

  // Every row of the attachments whose meta `doomed` picks: the index and meta first (so nothing lists or
  // serves a half-deleted one), the bytes, then call keys left pointing at nothing.
  const forget = async (doomed: (m: Meta) => boolean): Promise<number> => {
    const gone = new Set<string>();
    for await (const { value } of state.scan(META)) {
      const meta = parsed(value);
      if (!ID.test(meta.id) || !doomed(meta)) continue;
      await state.delete(`${turnPrefix(meta.turnId)}${meta.id}`);
      await state.delete(`${META}${meta.id}`);
      await state.delete(`attachment/bytes/${meta.id}`);
      gone.add(meta.id);
    }
    if (gone.size > 0)
      for await (const { key, value } of state.scan(CALL)) {
        const { id } = JSON.parse(Buffer.from(value).toString('utf8')) as { id: string };
        if (gone.has(id)) await state.delete(key);
      }
    return gone.size;
  };

  return {
    async save(binding, ref, bytes, callKey) {
      const done = await state.getJson<{ id: string }>(callKeyOf(callKey));
      const earlier = done && (await state.getJson<Meta>(`${META}${done.id}`));
      if (earlier) {
        // A crash may have come before the turn's index entry: writing it again is harmless.
        await state.putJson(`${turnPrefix(earlier.turnId)}${earlier.id}`, earlier);
        return refOf(earlier);
      }
      const meta: Meta = { id: randomBytes(16).toString('hex'), ...ref, ...binding, createdAt: now() };
      // Bytes first, the index last: whatever a crash leaves behind is never listed half-made.
      await state.put(`attachment/bytes/${meta.id}`, bytes);
      await state.putJson(`${META}${meta.id}`, meta);
      await state.putJson(callKeyOf(callKey), { id: meta.id });
      await state.putJson(`${turnPrefix(binding.turnId)}${meta.id}`, meta);
      return refOf(meta);
    },
    async get(id, owner) {
      if (!ID.test(id)) return undefined;
      const meta = await state.getJson<Meta>(`${META}${id}`);
      if (!meta || meta.channel !== owner.channel || meta.sessionId !== owner.sessionId || !live(meta)) return undefined;
      const bytes = await state.get(`attachment/bytes/${id}`);
      return bytes && { ...refOf(meta), bytes };
    },
    async forTurn(turnId, channel) {
      const out: Array<AttachmentRef & { sessionId: string }> = [];
      for await (const { value } of state.scan(turnPrefix(turnId))) {
        const meta = parsed(value);
        if (meta.channel === channel && meta.turnId === turnId && live(meta)) out.push({ ...refOf(meta), sessionId: meta.sessionId });
      }
      return out;
    },
    sweep: () => forget((m) => !live(m)),
    forgetSession: (channel, sessionId) => forget((m) => m.channel === channel && m.sessionId === sessionId),
  };
}
