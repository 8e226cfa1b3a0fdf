/** The Telegram channel: grammY adapter, reply and gate-notice deliverer, approvals, trust resolution from verified updates, rendering. */
export {
  startTelegramChannel,
  telegramMessageId,
  TELEGRAM_CHANNEL_NAME,
  type TelegramChannel,
  type TelegramChannelOptions,
} from './telegram-channel.js';
export { createTelegramDeliverer, parseReplyRoute, toReplyRoute, type TelegramDelivererDeps, type TelegramReplyRoute } from './delivery.js';
export {
  approvalKeyboard,
  callbackData,
  parseCallbackData,
  requestText,
  closedText,
  inputDigest,
  type TelegramMissionPort,
  type GateDecisionKind,
  type InlineKeyboard,
} from './approvals.js';
export { resolveTelegramTier, validateTrustPolicy, type TelegramTier, type TelegramOrigin, type TelegramTrustPolicy } from './trust.js';
export { splitMessage, streamView, outcomeText, TELEGRAM_MAX_TEXT } from './render.js';
export { telegramConfigFromEnv, telegramSettingsFromEnv, type TelegramConfig, type TelegramSettings } from './config.js';
