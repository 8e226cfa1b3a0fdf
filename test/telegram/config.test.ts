/** Telegram configuration from AIVYX_TELEGRAM_* and sealed secrets. */
import { describe, expect, it } from 'vitest';
import { telegramConfigFromEnv } from '../../channels/telegram/index.js';

const secrets: Record<string, string> = { 'tg-token': '123:abc', 'tg-hook': 'a-long-webhook-secret' };
const secret = async (n: string) => secrets[n];

describe('telegramConfigFromEnv', () => {
  it('is off without AIVYX_TELEGRAM_TOKEN_SECRET', async () => {
    expect(await telegramConfigFromEnv({}, secret)).toBeUndefined();
  });

  it('reads the token from the named secret, the allowlist and per-chat tiers', async () => {
    const c = await telegramConfigFromEnv(
      { AIVYX_TELEGRAM_TOKEN_SECRET: 'tg-token', AIVYX_TELEGRAM_ALLOWLIST: '42, 43', AIVYX_TELEGRAM_CHAT_TIERS: '-1001:SemiTrusted' },
      secret,
    );
    expect(c).toEqual({ token: '123:abc', allowlist: [42, 43], chatTiers: { '-1001': 'SemiTrusted' }, mode: 'polling' });
  });

  it('webhook mode needs a stored secret token', async () => {
    const base = { AIVYX_TELEGRAM_TOKEN_SECRET: 'tg-token', AIVYX_TELEGRAM_MODE: 'webhook' };
    await expect(telegramConfigFromEnv(base, secret)).rejects.toThrow(/AIVYX_TELEGRAM_WEBHOOK_SECRET/);
    const c = await telegramConfigFromEnv(
      { ...base, AIVYX_TELEGRAM_WEBHOOK_SECRET: 'tg-hook', AIVYX_TELEGRAM_WEBHOOK_PORT: '9000' },
      secret,
    );
    expect(c?.mode).toEqual({ webhook: { secretToken: 'a-long-webhook-secret', port: 9000 } });
  });

  it('refuses a missing token secret, bad ids and tiers above SemiTrusted', async () => {
    await expect(telegramConfigFromEnv({ AIVYX_TELEGRAM_TOKEN_SECRET: 'nope' }, secret)).rejects.toThrow(/"nope" is not set/);
    await expect(
      telegramConfigFromEnv({ AIVYX_TELEGRAM_TOKEN_SECRET: 'tg-token', AIVYX_TELEGRAM_ALLOWLIST: '@alice' }, secret),
    ).rejects.toThrow(/not a numeric/);
    await expect(
      telegramConfigFromEnv({ AIVYX_TELEGRAM_TOKEN_SECRET: 'tg-token', AIVYX_TELEGRAM_CHAT_TIERS: '5:Trusted' }, secret),
    ).rejects.toThrow(/at most SemiTrusted/);
  });
});
