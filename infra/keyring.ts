/**
 * Unlocks (or, on first run, creates) the install's master key, and changes the passphrase. The
 * install row holds the Argon2id salt/params, a key-check value and, once the passphrase has
 * changed, the master key wrapped under the passphrase's key — never the key in the clear. An
 * install begins with the derived key as its master key; a change keeps that same master key
 * (so nothing sealed is re-sealed) and wraps it under the new passphrase with a fresh salt.
 */
import { randomBytes } from 'node:crypto';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { Kysely } from 'kysely';
import { AivyxError } from '../core/errors.js';
import { timingSafeEqualHex } from '../core/canonical-json.js';
import { assertKdfParams, DEFAULT_KDF_PARAMS, deriveMasterKey, MasterKey, type KdfParams } from './crypto/key-schedule.js';
import { unwrapKey } from './crypto/key-wrap.js';
import type { Database, InstallRow } from './db/database.js';

/** Options of `openKeyring`; `kdfParams` applies only when creating a new install. */
export interface OpenKeyringOptions {
  kdfParams?: KdfParams;
  /**
   * First run only: asked for the passphrase a second time before the install is created (a person at
   * a prompt). A different answer creates nothing: a typo must not lock the owner out of their data.
   */
  confirmNew?: () => Promise<string>;
}

/** Derives the master key from `passphrase`, creating the install row on first run. */
export async function openKeyring(db: Kysely<Database>, passphrase: string, opts: OpenKeyringOptions = {}): Promise<MasterKey> {
  if (passphrase.length === 0) {
    throw new AivyxError('Config', 'empty passphrase', { hint: 'set AIVYX_PASSPHRASE, AIVYX_PASSPHRASE_FILE or enter one at the prompt' });
  }
  const existing = await readInstall(db);
  if (existing) return unlock(existing, passphrase);
  if (opts.confirmNew && (await opts.confirmNew()) !== passphrase) {
    throw new AivyxError('Config', 'the two passphrases differ: nothing was created', {
      hint: 'run the command again and type the same passphrase twice',
    });
  }

  const params = opts.kdfParams ?? { ...DEFAULT_KDF_PARAMS };
  assertKdfParams(params);
  const salt = new Uint8Array(randomBytes(16));
  const master = new MasterKey(await deriveMasterKey(passphrase, salt, params));
  // Two processes may race the first run: only one insert wins, the loser re-reads.
  await db
    .insertInto('install')
    .values({
      id: 1,
      kdf_salt: bytesToHex(salt),
      kdf_params: JSON.stringify({ m: params.m, t: params.t, p: params.p }),
      kcv: master.keyCheckValue(),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  const row = await readInstall(db);
  if (!row) throw new AivyxError('Storage', 'install row vanished right after it was created');
  if (row.kdf_salt === bytesToHex(salt)) return master;
  master.destroy();
  return unlock(row, passphrase);
}

/** True once the install exists (its keyring was created by a first run); reads only. */
export async function hasInstall(db: Kysely<Database>): Promise<boolean> {
  return (await readInstall(db)) !== undefined;
}

/** Reads the install row, if any. */
async function readInstall(db: Kysely<Database>): Promise<InstallRow | undefined> {
  return db.selectFrom('install').selectAll().where('id', '=', 1).executeTakeFirst();
}

/** The stored KDF parameters, checked. */
function paramsOf(row: InstallRow): KdfParams {
  let params: KdfParams;
  try {
    params = JSON.parse(row.kdf_params) as KdfParams;
  } catch (cause) {
    throw new AivyxError('Storage', 'install row has unreadable kdf_params', { cause });
  }
  assertKdfParams(params);
  return params;
}

function wrongPassphrase(): AivyxError {
  return new AivyxError('Crypto', 'wrong passphrase: it does not unlock this aivyx install', {
    hint: 'check AIVYX_PASSPHRASE / the key file; nothing was changed',
  });
}

/** Re-derives from the stored salt/params, unwraps when the row holds a wrapped key, and checks the KCV; writes nothing. */
async function unlock(row: InstallRow, passphrase: string): Promise<MasterKey> {
  const derived = await deriveMasterKey(passphrase, hexToBytes(row.kdf_salt), paramsOf(row));
  const bytes = row.wrapped_key ? unwrapKey(derived, row.wrapped_key) : derived;
  if (bytes !== derived) derived.fill(0);
  if (bytes === undefined) throw wrongPassphrase();
  const master = new MasterKey(bytes);
  bytes.fill(0);
  if (!timingSafeEqualHex(master.keyCheckValue(), row.kcv)) {
    master.destroy();
    throw wrongPassphrase();
  }
  return master;
}

/**
 * Changes the passphrase: unlocks with `current`, then wraps the same master key under `next` with a
 * fresh salt (and `kdfParams`, default the install's own). Nothing sealed changes; the old passphrase
 * stops working. A concurrent change makes this one fail rather than overwrite it.
 */
export async function changePassphrase(
  db: Kysely<Database>,
  current: string,
  next: string,
  opts: { kdfParams?: KdfParams } = {},
): Promise<void> {
  if (next.length === 0) throw new AivyxError('Config', 'empty new passphrase', { hint: 'type a passphrase you will remember' });
  const row = await readInstall(db);
  if (!row)
    throw new AivyxError('Storage', 'no install row: this database was never unlocked', { hint: 'start aivyx once to create the install' });
  const master = await unlock(row, current);
  try {
    const params = opts.kdfParams ?? paramsOf(row);
    assertKdfParams(params);
    const salt = new Uint8Array(randomBytes(16));
    const kek = await deriveMasterKey(next, salt, params);
    const wrapped = master.wrappedUnder(kek);
    kek.fill(0);
    const updated = await db
      .updateTable('install')
      .set({ kdf_salt: bytesToHex(salt), kdf_params: JSON.stringify({ m: params.m, t: params.t, p: params.p }), wrapped_key: wrapped })
      .where('id', '=', 1)
      .where('kdf_salt', '=', row.kdf_salt)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n)
      throw new AivyxError('Storage', 'the passphrase was changed by another process meanwhile; nothing was changed here', {
        hint: 'unlock with the passphrase that process set',
      });
  } finally {
    master.destroy();
  }
}
