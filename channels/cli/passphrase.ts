/** The CLI's passphrase source: env, key file, or a hidden prompt when a person is at a terminal. */
import { promptHidden, resolvePassphrase } from '../../infra/passphrase.js';

/** Resolves the passphrase for this command (never a default). */
export function cliPassphrase(): Promise<string> {
  return resolvePassphrase({ env: process.env, ...(process.stdin.isTTY ? { prompt: () => promptHidden('aivyx passphrase: ') } : {}) });
}
