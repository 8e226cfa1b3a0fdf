/** The Telegram channel: grammY adapter, trust resolution from verified updates, reply rendering. */
export {
  startTelegramChannel,
  telegramMessageId,
  TELEGRAM_CHANNEL_NAME,
  type TelegramChannel,
  type TelegramChannelOptions,
  type TelegramApprovalPort,
  type TelegramApprovalRequest,
} from './telegram-channel.js';
export { resolveTelegramTier, validateTrustPolicy, type TelegramTier, type TelegramOrigin, type TelegramTrustPolicy } from './trust.js';
export { splitMessage, streamView, outcomeText, TELEGRAM_MAX_TEXT } from './render.js';
export { telegramConfigFromEnv, type TelegramConfig } from './config.js';
