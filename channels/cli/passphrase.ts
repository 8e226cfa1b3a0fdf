/** The CLI's passphrase source: env, key file, or a hidden prompt when a person is at a terminal. */
import { promptHidden, resolvePassphrase } from '../../infra/passphrase.js';

/** Resolves the passphrase for this command (never a default). */
export function cliPassphrase(): Promise<string> {
  return resolvePassphrase({ env: process.env, ...(prompting() ? { prompt: () => promptHidden('aivyx passphrase: ') } : {}) });
}

/** True when the passphrase comes from a person at a terminal (no AIVYX_PASSPHRASE, no key file). */
export function prompting(): boolean {
  return process.stdin.isTTY === true && process.env.AIVYX_PASSPHRASE === undefined && !process.env.AIVYX_PASSPHRASE_FILE;
}
