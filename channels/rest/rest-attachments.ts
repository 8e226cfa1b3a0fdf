/**
 * Attachments on the local REST channel (`fs.attach`, core/attachments.ts). A turn's `outcome`
 * event lists the files it handed over; each is fetched by id with its conversation:
 *
 *   GET /v1/attachments/:id?session=S   the bytes (headers: channels/kit/attachment-headers.ts)
 *
 * Only attachments made for the local channels (`cli`, `rest`) in session S are served: another
 * conversation's, a Telegram chat's or a mail thread's answer 404, as an id that does not exist does.
 */
import type { Hono } from 'hono';
import { z } from 'zod';
import type { AttachmentSource } from '../../activities/tools/attachment-port.js';
import type { AttachmentRef } from '../../core/attachments.js';
import { AivyxError } from '../../core/errors.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { attachmentHeaders } from '../kit/attachment-headers.js';
import { parseBody } from '../zod-errors.js';

/** The channels the REST token speaks for. */
const LOCAL_CHANNELS = ['cli', 'rest'] as const;
const attachmentQuery = z.object({ session: z.string().min(1).max(200) }).strict();

/** An attachment as the `outcome` event lists it: the handle and the session to fetch it with. */
export type ListedAttachment = AttachmentRef & { session: string };

/** Registers GET /v1/attachments/:id (404 for every id when there is no store). */
export function attachmentRoutes(app: Hono, source: AttachmentSource | undefined): void {
  app.get('/v1/attachments/:id', async (c) => {
    const { session } = parseBody(attachmentQuery, c.req.query(), 'query');
    const id = c.req.param('id');
    for (const channel of LOCAL_CHANNELS) {
      const found = await source?.get(id, { channel, sessionId: session });
      if (found) return c.body(Buffer.from(found.bytes), 200, attachmentHeaders(found));
    }
    throw new AivyxError('NotFound', `no attachment ${id} in this conversation`, { hint: 'the outcome of the turn lists its attachments' });
  });
}

/** The outcome with the files its turn handed over on the local channels, when it has any. */
export async function outcomeWithAttachments(
  source: AttachmentSource | undefined,
  turnId: string,
  outcome: TurnOutcome,
): Promise<TurnOutcome & { attachments?: ListedAttachment[] }> {
  if (!source || outcome.status !== 'Completed') return outcome;
  const listed: ListedAttachment[] = [];
  for (const channel of LOCAL_CHANNELS)
    for (const { sessionId, ...ref } of await source.forTurn(turnId, channel)) listed.push({ ...ref, session: sessionId });
  return listed.length > 0 ? { ...outcome, attachments: listed } : outcome;
}
