/** Inbound messages (seed D3 `Message`/`MessageContent`, with the multimodal extension and A13 documents). */

/** One part of a message: text, an image, or a document (PDF etc., seed amendment A13). */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; mime: string; /** base64 */ data: string; filename?: string }
  | { type: 'document'; mime: string; /** base64 */ data: string; filename?: string };

/** The inbound unit delivered by a channel. `receivedAt` is epoch milliseconds. */
export interface Message {
  id: string;
  sessionId: string;
  content: ContentPart[];
  receivedAt: number;
}

/** Concatenated text parts of a message (what a text-only provider sees). */
export function messageText(content: readonly ContentPart[]): string {
  return content
    .filter((p): p is Extract<ContentPart, { type: 'text' }> => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}

/** A text-only message content. */
export function textContent(text: string): ContentPart[] {
  return [{ type: 'text', text }];
}
