/**
 * `aivyx passphrase change`: the install's master key re-wrapped under a new passphrase (nothing
 * sealed is re-sealed; infra/keyring.ts). The current passphrase comes from the usual sources; the
 * new one from a hidden prompt typed twice at a terminal, or from the first line of stdin.
 */
import type { Kysely } from 'kysely';
import { AivyxError } from '../../core/errors.js';
import type { Database } from '../../infra/db/index.js';
import { changePassphrase } from '../../infra/keyring.js';

export const PASSPHRASE_USAGE = `usage:
  aivyx passphrase change   unlock with the current passphrase, then set a new one (typed twice, or the first line of stdin)`;

/** What the command needs. */
export interface PassphraseCommandDeps {
  db: Kysely<Database>;
  /** The current passphrase (env, key file or prompt). */
  current(): Promise<string>;
  /** At a terminal: asks hidden; undefined when no person is there. */
  prompt?: (question: string) => Promise<string>;
  readStdin(): Promise<string>;
  out(s: string): void;
}

export async function runPassphraseCommand(args: string[], deps: PassphraseCommandDeps): Promise<number> {
  if (args.length !== 1 || args[0] !== 'change')
    throw new AivyxError('Config', `unknown passphrase command "${args.join(' ')}"`, { hint: PASSPHRASE_USAGE });
  const current = await deps.current();
  let next: string;
  if (deps.prompt) {
    next = await deps.prompt('new passphrase: ');
    if ((await deps.prompt('type the new passphrase again: ')) !== next)
      throw new AivyxError('Config', 'the two new passphrases differ: nothing was changed', { hint: 'run the command again' });
  } else {
    next = (await deps.readStdin()).split(/\r?\n/)[0] ?? '';
  }
  if (next === current) throw new AivyxError('Config', 'the new passphrase is the current one: nothing was changed');
  await changePassphrase(deps.db, current, next);
  deps.out(
    'passphrase changed: the old one no longer unlocks this install (nothing was re-sealed).\n' +
      'If AIVYX_PASSPHRASE or AIVYX_PASSPHRASE_FILE holds it, update that too.\n',
  );
  return 0;
}
