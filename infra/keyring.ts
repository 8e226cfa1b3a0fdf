/**
 * Unlocks (or, on first run, creates) the install's master key. The install row holds only
 * the Argon2id salt/params and a key-check value, never key material.
 */
import { randomBytes } from 'node:crypto';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import type { Kysely } from 'kysely';
import { AivyxError } from '../core/errors.js';
import { timingSafeEqualHex } from '../core/canonical-json.js';
import { assertKdfParams, DEFAULT_KDF_PARAMS, deriveMasterKey, MasterKey, type KdfParams } from './crypto/key-schedule.js';
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

/** Reads the install row, if any. */
async function readInstall(db: Kysely<Database>): Promise<InstallRow | undefined> {
  return db.selectFrom('install').selectAll().where('id', '=', 1).executeTakeFirst();
}

/** Re-derives from the stored salt/params and checks the KCV; writes nothing. */
async function unlock(row: InstallRow, passphrase: string): Promise<MasterKey> {
  let params: KdfParams;
  try {
    params = JSON.parse(row.kdf_params) as KdfParams;
  } catch (cause) {
    throw new AivyxError('Storage', 'install row has unreadable kdf_params', { cause });
  }
  assertKdfParams(params);
  const master = new MasterKey(await deriveMasterKey(passphrase, hexToBytes(row.kdf_salt), params));
  if (!timingSafeEqualHex(master.keyCheckValue(), row.kcv)) {
    master.destroy();
    throw new AivyxError('Crypto', 'wrong passphrase: it does not unlock this aivyx install', {
      hint: 'check AIVYX_PASSPHRASE / the key file; nothing was changed',
    });
  }
  return master;
}
