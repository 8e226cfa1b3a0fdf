/** Telegram through the channel contract: configured by a bot token secret (docs/TELEGRAM.md). */
import { defineChannel } from '../contract.js';
import { telegramConfigFromEnv, telegramSettingsFromEnv, type TelegramConfig } from './config.js';
import { startTelegramChannel, startTelegramOutbound, TELEGRAM_CHANNEL_NAME } from './telegram-channel.js';

export const telegramChannel = defineChannel<TelegramConfig>({
  name: TELEGRAM_CHANNEL_NAME,
  label: 'the Telegram channel',
  check: (env) => void telegramSettingsFromEnv(env),
  configure: ({ env, secret }) => telegramConfigFromEnv(env, secret),
  async start(config, ctx) {
    const tg = await startTelegramChannel({
      ...config,
      ...ctx,
      missionControl: ctx.missions,
      log: (line) => ctx.log(`[telegram] ${line}`),
    });
    return {
      describe: `telegram: ${config.mode === 'polling' ? 'long polling' : `webhook on ${tg.webhookUrl ?? '?'}`}`,
      stop: () => tg.stop(),
    };
  },
  async outbound(config, ctx) {
    const out = await startTelegramOutbound({ ...config, ...ctx, log: (line) => ctx.log(`[telegram] ${line}`) });
    return { describe: 'telegram: replies and notices (a gateway polls)', stop: () => out.stop() };
  },
});
