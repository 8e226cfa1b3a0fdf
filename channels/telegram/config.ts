/**
 * Telegram configuration from the environment (read only by composition roots), parsed through
 * the configuration table (`infra/config/env-table.ts`). The bot token is a sealed secret named by
 * AIVYX_TELEGRAM_TOKEN_SECRET; it never sits in the environment itself.
 */
import { AivyxError } from '../../core/errors.js';
import { envValue } from '../../infra/config.js';
import type { TelegramChannelOptions } from './telegram-channel.js';
import { validateTrustPolicy, type TelegramTier } from './trust.js';

/** The environment-derived part of `TelegramChannelOptions`. */
export type TelegramConfig = Pick<TelegramChannelOptions, 'token' | 'allowlist' | 'chatTiers' | 'mode'> & { apiRoot?: string };

/** Everything but the secrets: checked at start-up before anything opens (secret names only). */
export interface TelegramSettings {
  tokenSecret: string;
  allowlist: number[];
  chatTiers: Record<string, TelegramTier>;
  mode: 'polling' | { webhook: { secretName: string; port: number } };
  apiRoot?: string;
}

/** Reads and checks AIVYX_TELEGRAM_* without touching secrets; undefined when the channel is off. */
export function telegramSettingsFromEnv(env: Record<string, string | undefined>): TelegramSettings | undefined {
  const tokenSecret = envValue(env, 'AIVYX_TELEGRAM_TOKEN_SECRET');
  if (!tokenSecret) return undefined;
  const allowlist = envValue(env, 'AIVYX_TELEGRAM_ALLOWLIST');
  const chatTiers = Object.fromEntries(envValue(env, 'AIVYX_TELEGRAM_CHAT_TIERS')) as Record<string, TelegramTier>;
  validateTrustPolicy({ allowlist, chatTiers });
  let mode: TelegramSettings['mode'] = 'polling';
  if (envValue(env, 'AIVYX_TELEGRAM_MODE') === 'webhook') {
    const secretName = envValue(env, 'AIVYX_TELEGRAM_WEBHOOK_SECRET');
    if (!secretName)
      throw new AivyxError('Config', 'webhook mode needs AIVYX_TELEGRAM_WEBHOOK_SECRET naming a stored secret', {
        hint: 'aivyx secrets set telegram-webhook (16+ random characters), then AIVYX_TELEGRAM_WEBHOOK_SECRET=telegram-webhook',
      });
    mode = { webhook: { secretName, port: envValue(env, 'AIVYX_TELEGRAM_WEBHOOK_PORT') } };
  }
  const apiRoot = envValue(env, 'AIVYX_TELEGRAM_API_ROOT');
  return { tokenSecret, allowlist, chatTiers, mode, ...(apiRoot ? { apiRoot } : {}) };
}

/**
 * Reads AIVYX_TELEGRAM_* from `env`; undefined when AIVYX_TELEGRAM_TOKEN_SECRET is unset (the
 * channel is off). `secret(name)` reads the sealed `secrets` domain.
 */
export async function telegramConfigFromEnv(
  env: Record<string, string | undefined>,
  secret: (name: string) => Promise<string | undefined>,
): Promise<TelegramConfig | undefined> {
  const s = telegramSettingsFromEnv(env);
  if (!s) return undefined;
  const token = await secret(s.tokenSecret);
  if (!token)
    throw new AivyxError('Config', `the Telegram bot token secret "${s.tokenSecret}" is not set`, {
      hint: `aivyx secrets set ${s.tokenSecret}`,
    });
  let mode: TelegramConfig['mode'] = 'polling';
  if (s.mode !== 'polling') {
    const secretToken = await secret(s.mode.webhook.secretName);
    if (!secretToken)
      throw new AivyxError(
        'Config',
        `the Telegram webhook secret "${s.mode.webhook.secretName}" (AIVYX_TELEGRAM_WEBHOOK_SECRET) is not set`,
        { hint: `aivyx secrets set ${s.mode.webhook.secretName} (16+ random characters)` },
      );
    mode = { webhook: { secretToken, port: s.mode.webhook.port } };
  }
  return { token, allowlist: s.allowlist, chatTiers: s.chatTiers, mode, ...(s.apiRoot ? { apiRoot: s.apiRoot } : {}) };
}
