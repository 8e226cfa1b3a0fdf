/** Telegram trust resolution and reply rendering, as pure functions. */
import { describe, expect, it } from 'vitest';
import { outcomeText, resolveTelegramTier, splitMessage, streamView, validateTrustPolicy } from '../../channels/telegram/index.js';

const policy = { allowlist: [42] };

describe('resolveTelegramTier', () => {
  it('gives an allowlisted user SemiTrusted in their private chat only', () => {
    expect(resolveTelegramTier({ chatId: 42, chatType: 'private', senderId: 42 }, policy)).toBe('SemiTrusted');
    expect(resolveTelegramTier({ chatId: -1001, chatType: 'supergroup', senderId: 42 }, policy)).toBe('Untrusted');
    expect(resolveTelegramTier({ chatId: 7, chatType: 'private', senderId: 7 }, policy)).toBe('Untrusted');
    expect(resolveTelegramTier({ chatId: -5, chatType: 'channel' }, policy)).toBe('Untrusted');
    // A private chat whose id is not the sender's is not the allowlisted user's DM.
    expect(resolveTelegramTier({ chatId: 7, chatType: 'private', senderId: 42 }, policy)).toBe('Untrusted');
  });

  it('applies per-chat overrides, which can lower an allowlisted DM but never exceed SemiTrusted', () => {
    const p = { allowlist: [42], chatTiers: { '-1001': 'SemiTrusted' as const, '42': 'Untrusted' as const } };
    expect(resolveTelegramTier({ chatId: -1001, chatType: 'supergroup', senderId: 9 }, p)).toBe('SemiTrusted');
    expect(resolveTelegramTier({ chatId: 42, chatType: 'private', senderId: 42 }, p)).toBe('Untrusted');
    expect(() => validateTrustPolicy({ allowlist: [], chatTiers: { '1': 'Trusted' as never } })).toThrow(/at most SemiTrusted/);
    expect(() => validateTrustPolicy({ allowlist: [], chatTiers: { '1': 'Kernel' as never } })).toThrow(/at most SemiTrusted/);
    expect(() => validateTrustPolicy({ allowlist: [1.5] })).toThrow(/not a user id/);
  });
});

describe('rendering', () => {
  it('splits past 4,096 characters on line or word boundaries and never inside a surrogate pair', () => {
    expect(splitMessage('short')).toEqual(['short']);
    const words = Array.from({ length: 1500 }, (_, i) => `w${i}`).join(' ');
    const parts = splitMessage(words);
    expect(parts.every((p) => p.length <= 4096)).toBe(true);
    expect(parts.join(' ')).toBe(words);
    const emoji = '😀'.repeat(3000); // 6,000 code units
    const e = splitMessage(emoji);
    expect(e.every((p) => p.length <= 4096 && !/[\uD800-\uDBFF]$/.test(p))).toBe(true);
    expect(e.join('')).toBe(emoji);
  });

  it('keeps the streamed view under the limit with the tool-status lines', () => {
    const v = streamView('y'.repeat(10_000), ['⚙ shell.exec…']);
    expect(v.length).toBeLessThanOrEqual(4096);
    expect(v.endsWith('⚙ shell.exec…')).toBe(true);
    expect(streamView('', [])).toBe('…');
  });

  it('says what happened for every outcome', () => {
    expect(outcomeText({ status: 'Cancelled', toolCallsMade: 0 }, 'turn/telegram/t')).toBe('Cancelled.');
    expect(
      outcomeText({ status: 'Failed', error: { kind: 'Llm', message: 'down' }, toolCallsMade: 0 } as never, 'turn/telegram/t'),
    ).toMatch(/Llm.*down/);
    expect(
      outcomeText({ status: 'Escalated', reason: 'needs you', pendingTool: 'fs.delete', toolCallsMade: 1 }, 'turn/telegram/t'),
    ).toMatch(/gate mission-confirm-[0-9a-f]{32}\/gate-1.*\/approve mission-confirm-[0-9a-f]{32}\/gate-1/);
  });
});
