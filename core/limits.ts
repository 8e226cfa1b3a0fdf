/** Size limits a channel enforces before any workflow starts (Temporal caps a payload at 2 MiB). */
import { AivyxError } from './errors.js';
import type { Message } from './message.js';

/** Largest inbound message we accept, measured as its UTF-8 JSON encoding. Leaves headroom under 2 MiB. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** UTF-8 byte length without Node's Buffer (this file is workflow-safe). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(2)} MiB`;
}

/** Throws `AivyxError(Channel)` when a message is too large to become a turn; returns its size otherwise. */
export function assertMessageFits(message: Message, limit = MAX_MESSAGE_BYTES): number {
  const size = utf8Length(JSON.stringify(message));
  if (size > limit) {
    throw new AivyxError('Channel', `message is ${mib(size)}; the limit is ${mib(limit)}`, {
      hint: 'Temporal caps a workflow payload at 2 MiB: send a shorter message, or put the content in a file and ask the assistant to read it',
      detail: { size, limit },
    });
  }
  return size;
}
