/**
 * Key rotation: re-seal every sealed record under the subkeys of a newer key-schedule
 * version (same master key, HKDF salt 'aivyx-v2-storage', …). Resumable by re-running: rows
 * already at the target version are skipped, and reads work for mixed versions meanwhile.
 */
import { sql, type Kysely } from 'kysely';
import { AivyxError } from '../../core/errors.js';
import type { Database } from '../db/database.js';
import { STORAGE_DOMAINS, type StorageDomain } from './domain-handle.js';
import { openRecord, sealRecord, toPlain } from './record-seal.js';
import { assertKeysMatchInstall, storageVersionLabel, unlockStorageKeyring, type StorageKeys } from './storage-keys.js';

/** The version a rotation moves to when none is given and none is in progress. */
export const ROTATION_TARGET_VERSION = 2;

/** Progress of a rotation, reported after every batch. */
export interface RotationProgress {
  /** Rows re-sealed by this call so far. */
  resealed: number;
  /** Rows below the target version when this call started. */
  total: number;
  /** The target key-schedule version. */
  version: number;
}

/** Options of `rotateStorageKeys`. */
export interface RotateOptions {
  /** Target version (default: the one in progress, else 2); never lower than the current write version. */
  toVersion?: number;
  /** Rows per query (default 100). */
  batchSize?: number;
  /** Stop after re-sealing this many rows (simulates an interruption in tests). */
  stopAfter?: number;
  /** Called after every batch. */
  onProgress?: (p: RotationProgress) => void;
}

/** Outcome of one `rotateStorageKeys` call. */
export interface RotationResult {
  /** Rows re-sealed by this call. */
  resealed: number;
  /** True when no row is left below the target version. */
  done: boolean;
  /** The target key-schedule version (and, from now on, the write version). */
  version: number;
}

/**
 * Re-seals every row below the target version. Accepts the passphrase (unlocks and checks the
 * KCV first, so a wrong one changes nothing) or already-unlocked keys (checked the same way).
 */
export async function rotateStorageKeys(
  db: Kysely<Database>,
  passphraseOrKeys: string | StorageKeys,
  opts: RotateOptions = {},
): Promise<RotationResult> {
  const owned = typeof passphraseOrKeys === 'string' ? await unlockStorageKeyring(db, passphraseOrKeys) : undefined;
  const keys = owned ?? (passphraseOrKeys as StorageKeys);
  try {
    return await rotate(db, keys, opts);
  } finally {
    owned?.destroy();
  }
}

/** The rotation proper, after the keys are known. */
async function rotate(db: Kysely<Database>, keys: StorageKeys, opts: RotateOptions): Promise<RotationResult> {
  await assertKeysMatchInstall(db, keys);
  const batchSize = opts.batchSize ?? 100;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new AivyxError('Config', `batchSize must be a positive integer, got ${batchSize}`);
  const state = await db.selectFrom('storage_rotation').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
  const target = opts.toVersion ?? Math.max(ROTATION_TARGET_VERSION, state.write_version);
  if (!Number.isInteger(target) || target < state.write_version) {
    throw new AivyxError(
      'Config',
      `cannot rotate to key-schedule version ${target}: storage already writes version ${state.write_version}`,
      {
        hint: 'rotation only moves forward; re-run without a version to finish the one in progress',
      },
    );
  }
  // Derive (and so validate) every target subkey before the first write.
  for (const d of STORAGE_DOMAINS) keys.subkey(d, target);

  if (state.write_version < target) {
    // From this commit on every put seals with `target` (puts read it FOR SHARE, so this waits
    // for in-flight ones): the pass below cannot miss a row written concurrently.
    await db
      .updateTable('storage_rotation')
      .set({ write_version: target, started_at: sql<Date>`now()`, finished_at: null })
      .where('id', '=', 1)
      .where('write_version', '<', target)
      .execute();
  }

  const total = await countBelow(db, target);
  let resealed = 0;
  // Normally one pass; a second only if rows changed under the first (they are then at target).
  for (let pass = 0; pass < 3; pass++) {
    let after: { domain: string; key: string } | undefined;
    for (;;) {
      let q = db.selectFrom('sealed_records').select(['domain', 'key', 'version', 'nonce', 'ciphertext']).where('version', '<', target);
      if (after) {
        const a = after;
        q = q.where((eb) => eb(eb.refTuple('domain', 'key'), '>', eb.tuple(a.domain, a.key)));
      }
      const rows = await q.orderBy('domain').orderBy('key').limit(batchSize).execute();
      for (const row of rows) {
        if (opts.stopAfter !== undefined && resealed >= opts.stopAfter) return { resealed, done: false, version: target };
        if (await resealRow(db, keys, row, target)) resealed++;
      }
      opts.onProgress?.({ resealed, total, version: target });
      if (rows.length < batchSize) break;
      const last = rows[rows.length - 1]!;
      after = { domain: last.domain, key: last.key };
    }
    if ((await countBelow(db, target)) === 0) {
      await db
        .updateTable('storage_rotation')
        .set({ finished_at: sql<Date>`now()` })
        .where('id', '=', 1)
        .where('finished_at', 'is', null)
        .execute();
      return { resealed, done: true, version: target };
    }
  }
  return { resealed, done: false, version: target };
}

/** Rows still sealed under a version older than `target`. */
async function countBelow(db: Kysely<Database>, target: number): Promise<number> {
  const r = await db
    .selectFrom('sealed_records')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('version', '<', target)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/**
 * Opens one row under its own version and re-seals it under `target`. Compare-and-swap on the
 * old version and nonce: a row rewritten or deleted meanwhile is left as the writer left it.
 * A row that does not open throws Crypto (naming domain and key) and is not overwritten.
 */
async function resealRow(
  db: Kysely<Database>,
  keys: StorageKeys,
  row: { domain: string; key: string; version: number; nonce: Uint8Array; ciphertext: Uint8Array },
  target: number,
): Promise<boolean> {
  if (!(STORAGE_DOMAINS as readonly string[]).includes(row.domain)) {
    throw new AivyxError('Storage', `sealed record ${row.domain}/${row.key} is in an unknown domain`, {
      detail: { domain: row.domain, key: row.key },
    });
  }
  const domain = row.domain as StorageDomain;
  const nonce = toPlain(row.nonce);
  const plain = openRecord(keys.subkey(domain, row.version), domain, row.key, row.version, { nonce, ciphertext: toPlain(row.ciphertext) });
  const box = sealRecord(keys.subkey(domain, target), domain, row.key, target, plain);
  plain.fill(0);
  const r = await db
    .updateTable('sealed_records')
    .set({ version: target, nonce: Buffer.from(box.nonce), ciphertext: Buffer.from(box.ciphertext), updated_at: sql<Date>`now()` })
    .where('domain', '=', domain)
    .where('key', '=', row.key)
    .where('version', '=', row.version)
    .where('nonce', '=', Buffer.from(nonce))
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** The write version and whether the last rotation finished, for `aivyx storage status`-style output. */
export async function storageKeyStatus(db: Kysely<Database>): Promise<{ writeVersion: number; label: string; pendingRows: number }> {
  const state = await db.selectFrom('storage_rotation').select('write_version').where('id', '=', 1).executeTakeFirstOrThrow();
  return {
    writeVersion: state.write_version,
    label: storageVersionLabel(state.write_version),
    pendingRows: await countBelow(db, state.write_version),
  };
}
