/** Matrix through the channel contract: a homeserver, a bot account and its access token secret (docs/MATRIX.md). */
import { defineChannel } from '../contract.js';
import { matrixConfigFromEnv, matrixSettingsFromEnv, type MatrixConfig } from './config.js';
import { MATRIX_CHANNEL_NAME } from './inbound.js';
import { startMatrixChannel, startMatrixOutbound } from './matrix-channel.js';

export const matrixChannel = defineChannel<MatrixConfig>({
  name: MATRIX_CHANNEL_NAME,
  label: 'the Matrix channel',
  check: (env) => void matrixSettingsFromEnv(env),
  configure: ({ env, secret }) => matrixConfigFromEnv(env, secret),
  async start(config, ctx) {
    const mx = await startMatrixChannel(config, { ...ctx, log: (line) => ctx.log(`[matrix] ${line}`) });
    return { describe: `matrix: ${config.userId} on ${config.homeserver} (sync)`, stop: () => mx.stop() };
  },
  async outbound(config, ctx) {
    const out = await startMatrixOutbound(config, { ...ctx, log: (line) => ctx.log(`[matrix] ${line}`) });
    return { describe: `matrix: replies and notices as ${config.userId} (a gateway syncs)`, stop: () => out.stop() };
  },
});
