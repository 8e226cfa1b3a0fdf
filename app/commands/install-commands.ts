/** The commands that act on the install directly or on the running app: `aivyx app`, `secrets`, `passphrase`, `storage`. */
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import type { AivyxConfig } from '../../infra/config.js';
import { inspectHome, makeHome } from '../../infra/home-lock.js';
import { restToken } from '../../infra/home-tokens.js';
import { promptHidden } from '../../infra/passphrase.js';
import { directCommands, passphrase, readStdin } from './common.js';

/** `aivyx app`: a single-use sign-in link for the owner's app the running `aivyx up` serves. */
export async function appCommand(config: AivyxConfig, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { 'no-open': { type: 'boolean' } } });
  const found = inspectHome(config.home);
  if (found.state !== 'running')
    throw new AivyxError('Config', `no aivyx up is running on ${config.home}: the app is served by it`, {
      hint: 'start aivyx up (in another terminal) and run aivyx app again',
    });
  const { runAppCommand } = await import('../../channels/app/app-command.js');
  return runAppCommand(
    { appUrl: found.stack.appUrl, restToken: restToken(config.home) },
    { open: !values['no-open'] && process.stdout.isTTY === true, out: (s) => process.stdout.write(s), env: process.env },
  );
}

/** `aivyx secrets`: store or list the install's sealed secrets. */
export async function secretsCommand(config: AivyxConfig, args: string[]): Promise<number> {
  const [{ withStorage }, { runSecretsCommand }] = await Promise.all([directCommands(), import('../../channels/cli/secrets-commands.js')]);
  // The first command of an install may be this one: the data directory is made as `aivyx up` makes it.
  if (!config.databaseUrl) makeHome(config.home);
  const pass = await passphrase(config);
  return withStorage(
    config,
    (storage) =>
      runSecretsCommand(args, {
        storage,
        readStdin,
        out: (s) => process.stdout.write(s),
        ...(process.stdin.isTTY ? { prompt: (q: string) => promptHidden(q) } : {}),
      }),
    pass,
  );
}

/** `aivyx passphrase change`: a new passphrase for the install. */
export async function passphraseCommand(config: AivyxConfig, args: string[]): Promise<number> {
  const [{ withDatabase }, { runPassphraseCommand }] = await Promise.all([
    directCommands(),
    import('../../channels/cli/passphrase-commands.js'),
  ]);
  const current = await passphrase(config);
  return withDatabase(config, (db) =>
    runPassphraseCommand(args, {
      db,
      current: () => Promise.resolve(current),
      readStdin,
      out: (s) => process.stdout.write(s),
      ...(process.stdin.isTTY ? { prompt: (q: string) => promptHidden(q) } : {}),
    }),
  );
}

/** `aivyx storage rotate-keys`: re-seal every stored row under the next key-schedule version. */
export async function storageCommand(config: AivyxConfig, args: string[]): Promise<number> {
  const [{ withStorage }, { runRotateCommand }] = await Promise.all([directCommands(), import('../../channels/cli/secrets-commands.js')]);
  const pass = await passphrase(config);
  return withStorage(config, (storage) => runRotateCommand(args, { storage, out: (s) => process.stdout.write(s) }), pass);
}
