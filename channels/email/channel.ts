/** E-mail through the channel contract: configured when AIVYX_EMAIL_ADDRESS is set (docs/EMAIL.md). */
import { defineChannel } from '../contract.js';
import { emailConfigFromEnv, emailOptionsFromConfig, emailSettingsFromEnv, type EmailConfig } from './config.js';
import { startEmailChannel, startEmailOutbound, EMAIL_CHANNEL_NAME } from './email-channel.js';

export const emailChannel = defineChannel<EmailConfig>({
  name: EMAIL_CHANNEL_NAME,
  label: 'the email channel',
  check: (env) => void emailSettingsFromEnv(env),
  configure: ({ env, secret }) => emailConfigFromEnv(env, secret),
  async start(config, ctx) {
    const mail = await startEmailChannel({
      ...emailOptionsFromConfig(config),
      ...ctx,
      missionControl: ctx.missions,
      log: (line) => ctx.log(`[email] ${line}`),
    });
    return {
      describe: `email: ${config.address} (IMAP ${config.imap.host}:${config.imap.port}, SMTP ${config.smtp.host}:${config.smtp.port})`,
      stop: () => mail.stop(),
    };
  },
  async outbound(config, ctx) {
    const out = startEmailOutbound({ ...emailOptionsFromConfig(config), ...ctx, log: (line) => ctx.log(`[email] ${line}`) });
    return { describe: `email: sending as ${config.address} (SMTP ${config.smtp.host}:${config.smtp.port})`, stop: () => out.stop() };
  },
});
