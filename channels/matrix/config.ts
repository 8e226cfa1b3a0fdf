/**
 * Matrix configuration from the environment (read only by composition roots), through the
 * configuration table. The access token is a sealed secret named by AIVYX_MATRIX_TOKEN_SECRET.
 */
import { AivyxError } from '../../core/errors.js';
import { envValue } from '../../infra/config.js';
import type { MatrixTier } from './trust.js';
import type { DevicePin } from './verify.js';

/** Everything but the secret: checked at start-up before anything opens. */
export interface MatrixSettings {
  homeserver: string;
  userId: string;
  tokenSecret: string;
  allowlist: string[];
  roomTiers: Record<string, MatrixTier>;
  /** Devices the owner verified out of band (AIVYX_MATRIX_VERIFIED_DEVICES; verify.ts); none: every encrypted message is Untrusted. */
  verifiedDevices?: DevicePin[];
}

/** The channel's configuration (with the access token); `encryption: false` leaves encrypted rooms unread (default on). */
export type MatrixConfig = Omit<MatrixSettings, 'tokenSecret'> & { accessToken: string; encryption?: boolean };

/** Reads and checks AIVYX_MATRIX_* without touching secrets; undefined when the channel is off. */
export function matrixSettingsFromEnv(env: Record<string, string | undefined>): MatrixSettings | undefined {
  const homeserver = envValue(env, 'AIVYX_MATRIX_HOMESERVER');
  if (!homeserver) return undefined;
  const userId = envValue(env, 'AIVYX_MATRIX_USER_ID');
  const tokenSecret = envValue(env, 'AIVYX_MATRIX_TOKEN_SECRET');
  if (!userId || !tokenSecret)
    throw new AivyxError('Config', 'the Matrix channel needs AIVYX_MATRIX_USER_ID and AIVYX_MATRIX_TOKEN_SECRET', {
      hint: 'aivyx secrets set matrix-token (the bot account access token), then AIVYX_MATRIX_TOKEN_SECRET=matrix-token',
    });
  const roomTiers = Object.fromEntries(envValue(env, 'AIVYX_MATRIX_ROOM_TIERS')) as Record<string, MatrixTier>;
  const verifiedDevices = envValue(env, 'AIVYX_MATRIX_VERIFIED_DEVICES');
  return { homeserver, userId, tokenSecret, allowlist: envValue(env, 'AIVYX_MATRIX_ALLOWLIST'), roomTiers, verifiedDevices };
}

/** Reads AIVYX_MATRIX_* and the access token secret; undefined when AIVYX_MATRIX_HOMESERVER is unset. */
export async function matrixConfigFromEnv(
  env: Record<string, string | undefined>,
  secret: (name: string) => Promise<string | undefined>,
): Promise<MatrixConfig | undefined> {
  const s = matrixSettingsFromEnv(env);
  if (!s) return undefined;
  const accessToken = await secret(s.tokenSecret);
  if (!accessToken)
    throw new AivyxError('Config', `the Matrix access token secret "${s.tokenSecret}" is not set`, {
      hint: `aivyx secrets set ${s.tokenSecret}`,
    });
  const { tokenSecret: _name, ...rest } = s;
  return { ...rest, accessToken };
}
