import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { assertMessageFits, MAX_MESSAGE_BYTES, utf8Length } from '../../core/limits.js';
import { textContent } from '../../core/message.js';

const msg = (text: string) => ({ id: 'm', sessionId: 's', content: textContent(text), receivedAt: 0 });

describe('message size cap', () => {
  it('counts UTF-8 bytes like TextEncoder', () => {
    for (const s of ['', 'abc', 'é', '€', '😀', 'a😀é€']) expect(utf8Length(s)).toBe(new TextEncoder().encode(s).length);
  });
  it('accepts a message under the cap', () => {
    expect(assertMessageFits(msg('hello'))).toBeGreaterThan(0);
  });
  it('refuses an oversized message with a Channel error a person can act on', () => {
    const big = msg('x'.repeat(MAX_MESSAGE_BYTES));
    try {
      assertMessageFits(big);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(AivyxError);
      expect((e as AivyxError).kind).toBe('Channel');
      expect((e as AivyxError).message).toMatch(/message is 1\.00 MiB; the limit is 1\.00 MiB/);
      expect((e as AivyxError).hint).toMatch(/2 MiB/);
    }
  });
});
