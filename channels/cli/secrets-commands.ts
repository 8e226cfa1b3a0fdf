/** `aivyx secrets set NAME | list` and `aivyx storage rotate-keys`, over an opened SealedStorage. */
import { AivyxError } from '../../core/errors.js';
import { listSecretNames, setSecret, assertSecretName } from '../../infra/secrets.js';
import type { SealedStorage } from '../../infra/storage/sealed-storage.js';
import { rotateStorageKeys } from '../../infra/storage/rotate-keys.js';

/** What the secrets commands need from the process; injected so tests need no TTY. */
export interface SecretsCommandDeps {
  storage: SealedStorage;
  /** All of stdin (used when no prompt is given, i.e. stdin is not a terminal). */
  readStdin(): Promise<string>;
  /** Hidden prompt; pass it only when stdin is a TTY. */
  prompt?(q: string): Promise<string>;
  /** Writes one chunk of output (include the newline). */
  out(s: string): void;
}

const SECRETS_USAGE = 'usage: aivyx secrets set NAME   (value from stdin, or a hidden prompt in a terminal)\n       aivyx secrets list';

/** Runs `secrets <args…>` (args exclude the word "secrets"); returns the exit status. */
export async function runSecretsCommand(args: string[], deps: SecretsCommandDeps): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'list' && rest.length === 0) {
    for (const name of await listSecretNames(deps.storage)) deps.out(`${name}\n`);
    return 0;
  }
  if (sub === 'set' && rest.length === 1) {
    const name = rest[0]!;
    // Check the name before asking for a value nobody could store.
    assertSecretName(name);
    const raw = deps.prompt ? await deps.prompt(`value for ${name}: `) : await deps.readStdin();
    // Only the line terminator goes: spaces may be part of a password.
    const value = raw.replace(/\r?\n$/, '');
    if (value.length === 0)
      throw new AivyxError('Config', `no value given for secret ${name}`, {
        hint: 'pipe it on stdin (printf %s "$TOKEN" | aivyx secrets set NAME) or type it at the prompt',
      });
    await setSecret(deps.storage, name, value);
    deps.out(`secret ${name} stored (sealed)\n`);
    return 0;
  }
  throw new AivyxError('Config', `unknown secrets command "${args.join(' ')}"`, { hint: SECRETS_USAGE });
}

/** What `storage rotate-keys` needs: storage opened with a StorageKeyring, and an output sink. */
export interface RotateCommandDeps {
  storage: SealedStorage;
  out(s: string): void;
}

/** Runs `storage rotate-keys [--batch-size N]` (args exclude "storage"); exit 0 when done, 1 if rows remain. */
export async function runRotateCommand(args: string[], deps: RotateCommandDeps): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'rotate-keys')
    throw new AivyxError('Config', `unknown storage command "${sub ?? ''}"`, { hint: 'usage: aivyx storage rotate-keys [--batch-size N]' });
  let batchSize: number | undefined;
  if (rest.length === 2 && rest[0] === '--batch-size') batchSize = Number(rest[1]);
  else if (rest.length !== 0)
    throw new AivyxError('Config', `unexpected arguments "${rest.join(' ')}"`, {
      hint: 'usage: aivyx storage rotate-keys [--batch-size N]',
    });
  const result = await rotateStorageKeys(deps.storage.db, deps.storage.keys, {
    ...(batchSize === undefined ? {} : { batchSize }),
    onProgress: (p) => deps.out(`re-sealed ${p.resealed}/${p.total} rows under v${p.version}\n`),
  });
  deps.out(
    result.done
      ? `storage keys rotated: every row is sealed under aivyx-v${result.version}-storage (${result.resealed} re-sealed now)\n`
      : `rotation to aivyx-v${result.version}-storage interrupted after ${result.resealed} rows; re-run to finish\n`,
  );
  return result.done ? 0 : 1;
}
