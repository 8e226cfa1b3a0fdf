/**
 * Attachments at rest: the bytes of a file a turn hands over (`fs.attach`), sealed like every
 * channel's state (the `channel_state` domain: XChaCha20-Poly1305 under its subkey, the row key as
 * associated data), and bound to the conversation that asked. Workflows only ever see the handle.
 *
 *   attachment/meta/<id>                        the handle and its binding (channel, session, turn)
 *   attachment/bytes/<id>                       the file
 *   attachment/turn/<encoded turn id>/<id>      the turn's attachments, for its reply
 *   attachment/call/<sha256 of the call key>    the attachment a tool call made (a retry makes none anew)
 *
 * Who may fetch one: only the channel and session it was made for (`get` answers undefined for any
 * other, the same as for an id that does not exist, so a guessed id tells nothing).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { AttachmentRef } from '../core/attachments.js';
import type { AttachmentSink, AttachmentSource, AttachmentBinding } from '../activities/tools/attachment-port.js';
import type { DomainHandle } from './storage/index.js';

/** Both sides over one store. */
export type AttachmentStore = AttachmentSink & AttachmentSource;

type Meta = AttachmentRef & AttachmentBinding;

const ID = /^[0-9a-f]{32}$/;
const turnPrefix = (turnId: string) => `attachment/turn/${encodeURIComponent(turnId)}/`;
const callKeyOf = (callKey: string) => `attachment/call/${createHash('sha256').update(callKey).digest('hex')}`;
const refOf = (m: Meta): AttachmentRef => ({ id: m.id, name: m.name, mime: m.mime, size: m.size });

/** The attachment store over a `channel_state` handle. */
export function createAttachmentStore(state: DomainHandle): AttachmentStore {
  return {
    async save(binding, ref, bytes, callKey) {
      const done = await state.getJson<{ id: string }>(callKeyOf(callKey));
      const earlier = done && (await state.getJson<Meta>(`attachment/meta/${done.id}`));
      if (earlier) {
        // A crash may have come before the turn's index entry: writing it again is harmless.
        await state.putJson(`${turnPrefix(earlier.turnId)}${earlier.id}`, earlier);
        return refOf(earlier);
      }
      const meta: Meta = { id: randomBytes(16).toString('hex'), ...ref, ...binding };
      // Bytes first, the index last: whatever a crash leaves behind is never listed half-made.
      await state.put(`attachment/bytes/${meta.id}`, bytes);
      await state.putJson(`attachment/meta/${meta.id}`, meta);
      await state.putJson(callKeyOf(callKey), { id: meta.id });
      await state.putJson(`${turnPrefix(binding.turnId)}${meta.id}`, meta);
      return refOf(meta);
    },
    async get(id, owner) {
      if (!ID.test(id)) return undefined;
      const meta = await state.getJson<Meta>(`attachment/meta/${id}`);
      if (!meta || meta.channel !== owner.channel || meta.sessionId !== owner.sessionId) return undefined;
      const bytes = await state.get(`attachment/bytes/${id}`);
      return bytes && { ...refOf(meta), bytes };
    },
    async forTurn(turnId, channel) {
      const out: Array<AttachmentRef & { sessionId: string }> = [];
      for await (const { value } of state.scan(turnPrefix(turnId))) {
        const meta = JSON.parse(Buffer.from(value).toString('utf8')) as Meta;
        if (meta.channel === channel && meta.turnId === turnId) out.push({ ...refOf(meta), sessionId: meta.sessionId });
      }
      return out;
    },
  };
}
