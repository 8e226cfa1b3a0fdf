/** The ports of attachments (core/attachments.ts): where `fs.attach` stores a file, and where deliveries read it (infra/attachments.ts). */
import type { AttachmentRef } from '../../core/attachments.js';

/** Which conversation an attachment belongs to. */
export interface AttachmentBinding {
  /** Channel instance name (`telegram`, `rest`, `cli`, `email`…). */
  channel: string;
  sessionId: string;
  turnId: string;
}

/** An attachment with its bytes, for a channel that sends it. */
export interface LoadedAttachment extends AttachmentRef {
  bytes: Uint8Array;
}

/** What the `fs.attach` tool needs: to store a file once per call. */
export interface AttachmentSink {
  /** Stores `bytes` for `binding` once per `callKey` (a retried call gets the first handle back). */
  save(binding: AttachmentBinding, ref: Omit<AttachmentRef, 'id'>, bytes: Uint8Array, callKey: string): Promise<AttachmentRef>;
}

/** What channels read: one attachment of a session, and a turn's attachments. */
export interface AttachmentSource {
  /** The attachment `id` if it belongs to `channel` and `sessionId`; otherwise undefined (as for no such id). */
  get(id: string, owner: { channel: string; sessionId: string }): Promise<LoadedAttachment | undefined>;
  /** The handles `turnId` made for `channel` (in id order), each with the session it belongs to. */
  forTurn(turnId: string, channel: string): Promise<Array<AttachmentRef & { sessionId: string }>>;
}

/** A turn's attachments with their bytes, for a channel that sends them with the reply. */
export async function loadTurnAttachments(
  source: AttachmentSource,
  turnId: string,
  owner: { channel: string; sessionId: string },
): Promise<LoadedAttachment[]> {
  const out: LoadedAttachment[] = [];
  for (const ref of await source.forTurn(turnId, owner.channel)) {
    const loaded = await source.get(ref.id, owner);
    if (loaded) out.push(loaded);
  }
  return out;
}
