/**
 * Trust for Telegram: resolved from the verified update (chat type, chat id, sender id), never
 * from message text. Allowlisted users in their private chat are SemiTrusted; every other chat is
 * Untrusted unless configured per chat, and no configuration can go above SemiTrusted.
 */
import type { TrustTier } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';

/** Tiers a Telegram chat may be configured to (the ceiling is SemiTrusted). */
export type TelegramTier = Extract<TrustTier, 'SemiTrusted' | 'Untrusted'>;

/** The transport facts the tier is computed from (all taken from the update Telegram sent). */
export interface TelegramOrigin {
  chatId: number;
  chatType: 'private' | 'group' | 'supergroup' | 'channel';
  /** Absent for channel posts. */
  senderId?: number;
}

/** Allowlist and per-chat overrides. */
export interface TelegramTrustPolicy {
  allowlist: readonly number[];
  chatTiers?: Readonly<Record<string, TelegramTier>>;
}

/** Throws Config when a per-chat tier is above SemiTrusted or unknown. */
export function validateTrustPolicy(policy: TelegramTrustPolicy): void {
  for (const id of policy.allowlist) {
    if (!Number.isSafeInteger(id))
      throw new AivyxError('Config', `Telegram allowlist entry ${String(id)} is not a user id`, { hint: 'use numeric Telegram user ids' });
  }
  for (const [chat, tier] of Object.entries(policy.chatTiers ?? {})) {
    if (tier !== 'SemiTrusted' && tier !== 'Untrusted') {
      throw new AivyxError('Config', `Telegram chat ${chat} is configured as ${String(tier)}; a Telegram chat can be at most SemiTrusted`, {
        hint: 'use SemiTrusted or Untrusted; Trusted is for local channels only',
      });
    }
  }
}

/** The tier of a message from `origin`. */
export function resolveTelegramTier(origin: TelegramOrigin, policy: TelegramTrustPolicy): TelegramTier {
  const configured = policy.chatTiers?.[String(origin.chatId)];
  if (configured === 'Untrusted') return 'Untrusted';
  // A private chat's id is the user's id; requiring both closes a forged-chat gap.
  const allowlistedDm =
    origin.chatType === 'private' &&
    origin.senderId !== undefined &&
    origin.senderId === origin.chatId &&
    policy.allowlist.includes(origin.senderId);
  if (allowlistedDm) return 'SemiTrusted';
  return configured === 'SemiTrusted' ? 'SemiTrusted' : 'Untrusted';
}
