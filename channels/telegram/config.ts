/**
 * Telegram configuration from the environment (read only by composition roots). The bot token is
 * a sealed secret named by AIVYX_TELEGRAM_TOKEN_SECRET; it never sits in the environment itself.
 */
import { AivyxError } from '../../core/errors.js';
import type { TelegramChannelOptions } from './telegram-channel.js';
import { validateTrustPolicy, type TelegramTier } from './trust.js';

/** The environment-derived part of `TelegramChannelOptions`. */
export type TelegramConfig = Pick<TelegramChannelOptions, 'token' | 'allowlist' | 'chatTiers' | 'mode'> & { apiRoot?: string };

function ids(raw: string, what: string): number[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
    .map((s) => {
      if (!/^-?\d+$/.test(s)) throw new AivyxError('Config', `${what}: "${s}" is not a numeric Telegram id`, { hint: 'use comma-separated numeric ids, e.g. 12345,67890' });
      return Number(s);
    });
}

/**
 * Reads AIVYX_TELEGRAM_* from `env`; undefined when AIVYX_TELEGRAM_TOKEN_SECRET is unset (the
 * channel is off). `secret(name)` reads the sealed `secrets` domain.
 */
export async function telegramConfigFromEnv(env: Record<string, string | undefined>, secret: (name: string) => Promise<string | undefined>): Promise<TelegramConfig | undefined> {
  const tokenName = env.AIVYX_TELEGRAM_TOKEN_SECRET;
  if (!tokenName) return undefined;
  const token = await secret(tokenName);
  if (!token) throw new AivyxError('Config', `the Telegram bot token secret "${tokenName}" is not set`, { hint: `aivyx secrets set ${tokenName}` });
  const allowlist = ids(env.AIVYX_TELEGRAM_ALLOWLIST ?? '', 'AIVYX_TELEGRAM_ALLOWLIST');
  const chatTiers: Record<string, TelegramTier> = {};
  for (const pair of (env.AIVYX_TELEGRAM_CHAT_TIERS ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const [chat, tier] = pair.split(':');
    ids(chat ?? '', 'AIVYX_TELEGRAM_CHAT_TIERS');
    chatTiers[chat!] = tier as TelegramTier;
  }
  validateTrustPolicy({ allowlist, chatTiers });
  const modeName = env.AIVYX_TELEGRAM_MODE ?? 'polling';
  let mode: TelegramConfig['mode'];
  if (modeName === 'polling') mode = 'polling';
  else if (modeName === 'webhook') {
    const secretName = env.AIVYX_TELEGRAM_WEBHOOK_SECRET;
    const secretToken = secretName ? await secret(secretName) : undefined;
    if (!secretToken) throw new AivyxError('Config', 'webhook mode needs AIVYX_TELEGRAM_WEBHOOK_SECRET naming a stored secret', { hint: 'aivyx secrets set telegram-webhook (16+ random characters), then AIVYX_TELEGRAM_WEBHOOK_SECRET=telegram-webhook' });
    const port = Number(env.AIVYX_TELEGRAM_WEBHOOK_PORT ?? 8443);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new AivyxError('Config', `AIVYX_TELEGRAM_WEBHOOK_PORT "${env.AIVYX_TELEGRAM_WEBHOOK_PORT}" is not a port`);
    mode = { webhook: { secretToken, port } };
  } else throw new AivyxError('Config', `AIVYX_TELEGRAM_MODE must be polling or webhook, got "${modeName}"`);
  return { token, allowlist, chatTiers, mode, ...(env.AIVYX_TELEGRAM_API_ROOT ? { apiRoot: env.AIVYX_TELEGRAM_API_ROOT } : {}) };
}
