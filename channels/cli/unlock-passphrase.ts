/**
 * The passphrase at a terminal, asked so a person understands it: on a fresh install the prompt says it
 * sets a NEW passphrase and asks for it twice; on an existing one a wrong passphrase is asked again (at
 * most {@link PASSPHRASE_TRIES} times) instead of ending the command. Without a person (AIVYX_PASSPHRASE,
 * a key file) the passphrase is taken as given: nobody could type another.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AivyxError } from '../../core/errors.js';
import type { AivyxConfig } from '../../infra/config.js';
import { hasInstall, openKeyring } from '../../infra/keyring.js';
import { withDatabase } from './audit-commands.js';
import { cliPassphrase, prompting } from './passphrase.js';

/** How many times a person may type a passphrase (a wrong one, or two new ones that differ). */
export const PASSPHRASE_TRIES = 3;

/** The prompts, first run and later. */
export const NEW_PASSPHRASE_PROMPT = 'new install — choose a NEW passphrase (it encrypts everything; it cannot be recovered): ';
const CONFIRM_PROMPT = 'type the new passphrase again: ';
const PROMPT = 'aivyx passphrase: ';

/** Whether `config`'s install exists yet (an embedded database not created yet is a fresh install). */
async function installed(config: AivyxConfig): Promise<boolean> {
  if (!config.databaseUrl && !existsSync(join(config.home, 'pglite'))) return false;
  return withDatabase(config, hasInstall);
}

/** A new passphrase typed twice the same (asked again when the two differ). */
async function newPassphrase(ask: (q: string) => Promise<string>): Promise<string> {
  for (let n = 1; n <= PASSPHRASE_TRIES; n++) {
    const first = await ask(n === 1 ? NEW_PASSPHRASE_PROMPT : `the two differ — choose it again (try ${n} of ${PASSPHRASE_TRIES}): `);
    if (first === '') throw new AivyxError('Config', 'empty passphrase entered: nothing was created');
    if ((await ask(CONFIRM_PROMPT)) === first) return first;
  }
  throw new AivyxError('Config', `the two passphrases differed ${PASSPHRASE_TRIES} times: nothing was created`, {
    hint: 'run the command again and type the same passphrase twice',
  });
}

/** The passphrase that unlocks the existing install, asked again after a wrong one. */
async function currentPassphrase(config: AivyxConfig, ask: (q: string) => Promise<string>): Promise<string> {
  return withDatabase(config, async (db) => {
    for (let n = 1; n <= PASSPHRASE_TRIES; n++) {
      const typed = await ask(n === 1 ? PROMPT : `wrong passphrase — try again (${n} of ${PASSPHRASE_TRIES}): `);
      try {
        (await openKeyring(db, typed)).destroy();
        return typed;
      } catch (e) {
        if (!(e instanceof AivyxError) || (e.kind !== 'Crypto' && e.kind !== 'Config')) throw e;
      }
    }
    throw new AivyxError('Crypto', `${PASSPHRASE_TRIES} wrong passphrases: nothing was opened`, {
      hint: 'run the command again; `aivyx passphrase change` needs the current one',
    });
  });
}

/**
 * The passphrase for a command that opens the install (`up`, `secrets`, `--standalone`…): checked at a
 * terminal as described above, or from the environment as given. `ask` is the hidden prompt.
 */
export async function unlockingPassphrase(config: AivyxConfig, ask: (q: string) => Promise<string>): Promise<string> {
  if (!prompting()) return cliPassphrase();
  return (await installed(config)) ? currentPassphrase(config, ask) : newPassphrase(ask);
}
