import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deriveSubkey } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import {
  rotateStorageKeys,
  SealedStorage,
  STORAGE_DOMAINS,
  StorageKeyring,
  storageKeyStatus,
  unlockStorageKeyring,
  type RotationProgress,
} from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';

const small = { m: 256, t: 1, p: 1 };
const PASS = 'rotate me';
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

it('v2 subkeys are HKDF(master, salt "aivyx-v2-storage", info domain); v1 ones are the MasterKey ones', () => {
  const bytes = new Uint8Array(32).fill(3);
  const ring = new StorageKeyring(bytes);
  expect(ring.subkey('memory', 2)).toEqual(deriveSubkey(bytes, 'memory', 'aivyx-v2-storage'));
  expect(ring.subkey('memory', 1)).toEqual(ring.master.subkey('memory'));
  expect(ring.subkey('memory', 1)).toEqual(deriveSubkey(bytes, 'memory', 'aivyx-v1-storage'));
  expect(JSON.stringify({ ring })).toBe('{"ring":"[StorageKeyring]"}');
});

describe.each(openStorageBackends())('key rotation on $name', (backend) => {
  let s: OpenDatabase;
  let keys: StorageKeyring;
  let storage: SealedStorage;
  const expected = new Map<string, string>();

  /** Every row as (domain/key → version), plus the raw bytes for change detection. */
  async function snapshot(): Promise<Array<{ id: string; version: number; hex: string }>> {
    const rows = await s.db.selectFrom('sealed_records').selectAll().orderBy('domain').orderBy('key').execute();
    return rows.map((r) => ({
      id: `${r.domain}/${r.key}`,
      version: r.version,
      hex: Buffer.from(r.nonce).toString('hex') + Buffer.from(r.ciphertext).toString('hex'),
    }));
  }

  async function expectAllValuesIntact(st: SealedStorage): Promise<void> {
    for (const [id, value] of expected) {
      const [domain, key] = id.split('|') as [(typeof STORAGE_DOMAINS)[number], string];
      expect(dec((await st.domain(domain).get(key))!)).toBe(value);
    }
  }

  beforeAll(async () => {
    s = await backend.open();
    (await openKeyring(s.db, PASS, { kdfParams: small })).destroy();
    keys = await unlockStorageKeyring(s.db, PASS);
    storage = SealedStorage.open(s.db, keys);
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    await sql`delete from sealed_records`.execute(s.db);
    await sql`update storage_rotation set write_version = 1, started_at = null, finished_at = null`.execute(s.db);
    expected.clear();
    for (const d of STORAGE_DOMAINS) {
      for (let i = 0; i < 5; i++) {
        const key = `${d}-key-${i}`;
        expected.set(`${d}|${key}`, `value ${d} ${i}`);
        await storage.domain(d).put(key, enc(`value ${d} ${i}`));
      }
    }
  });

  it('interrupted mid-way, reads work for mixed versions, and a re-run completes', async () => {
    const progress: RotationProgress[] = [];
    const first = await rotateStorageKeys(s.db, keys, { batchSize: 4, stopAfter: 10, onProgress: (p) => progress.push(p) });
    expect(first).toEqual({ resealed: 10, done: false, version: 2 });
    expect(progress.at(-1)).toMatchObject({ total: STORAGE_DOMAINS.length * 5, version: 2 });
    const mid = await snapshot();
    expect(mid.filter((r) => r.version === 2)).toHaveLength(10);
    expect(mid.filter((r) => r.version === 1)).toHaveLength(STORAGE_DOMAINS.length * 5 - 10);
    expect(await storageKeyStatus(s.db)).toEqual({
      writeVersion: 2,
      label: 'aivyx-v2-storage',
      pendingRows: STORAGE_DOMAINS.length * 5 - 10,
    });

    // Mixed versions read fine, in get and scan; writes during the rotation are already v2.
    await expectAllValuesIntact(storage);
    const scanned: string[] = [];
    for await (const { value } of storage.domain('memory').scan('memory-')) scanned.push(dec(value));
    expect(scanned).toEqual([0, 1, 2, 3, 4].map((i) => `value memory ${i}`));
    await storage.domain('sessions').put('written-mid-rotation', enc('new'));
    expected.set('sessions|written-mid-rotation', 'new');
    expect((await snapshot()).find((r) => r.id === 'sessions/written-mid-rotation')?.version).toBe(2);

    // Re-running resumes: only the remaining rows are re-sealed.
    const second = await rotateStorageKeys(s.db, PASS, { batchSize: 4 });
    expect(second).toEqual({ resealed: STORAGE_DOMAINS.length * 5 - 10, done: true, version: 2 });
    const end = await snapshot();
    expect(end.every((r) => r.version === 2)).toBe(true);
    // Rows re-sealed in the first run were not touched again.
    for (const r of mid.filter((x) => x.version === 2)) expect(end.find((e) => e.id === r.id)?.hex).toBe(r.hex);
    await expectAllValuesIntact(storage);
    expect(await storageKeyStatus(s.db)).toEqual({ writeVersion: 2, label: 'aivyx-v2-storage', pendingRows: 0 });
    const state = await s.db.selectFrom('storage_rotation').selectAll().executeTakeFirstOrThrow();
    expect(state.finished_at).not.toBeNull();

    // A third run has nothing to do; the same passphrase still unlocks the install (v1 KCV).
    expect(await rotateStorageKeys(s.db, keys)).toEqual({ resealed: 0, done: true, version: 2 });
    (await openKeyring(s.db, PASS)).destroy();
    // A fresh process (new keyring from the passphrase) reads everything.
    const fresh = SealedStorage.open(s.db, await unlockStorageKeyring(s.db, PASS));
    await expectAllValuesIntact(fresh);
  });

  it('storage opened with the plain MasterKey reads rotated rows and writes at the new version', async () => {
    const original = await SealedStorage.open(s.db, keys).domain('memory').get('memory-key-0');
    await rotateStorageKeys(s.db, keys);
    const fromMaster = SealedStorage.open(s.db, keys.master);
    expect(await fromMaster.domain('memory').get('memory-key-0')).toEqual(original);
    await fromMaster.domain('memory').put('written-after', enc('after'));
    const row = await s.db.selectFrom('sealed_records').select('version').where('key', '=', 'written-after').executeTakeFirstOrThrow();
    expect(row.version).toBe(2);
  });

  it('a wrong passphrase changes nothing', async () => {
    const before = await snapshot();
    await expect(rotateStorageKeys(s.db, 'not the passphrase')).rejects.toMatchObject({
      kind: 'Crypto',
      message: expect.stringContaining('wrong passphrase') as unknown,
    });
    await expect(rotateStorageKeys(s.db, new StorageKeyring(new Uint8Array(32).fill(1)))).rejects.toMatchObject({ kind: 'Crypto' });
    expect(await snapshot()).toEqual(before);
    expect(await storageKeyStatus(s.db)).toMatchObject({ writeVersion: 1 });
    await expect(unlockStorageKeyring(s.db, 'not the passphrase')).rejects.toMatchObject({ kind: 'Crypto' });
  });

  it('a corrupted row stops the rotation with a Crypto error naming it, and is not overwritten', async () => {
    await sql`update sealed_records set ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) where key = 'memory-key-2'`.execute(
      s.db,
    );
    const bad = (await snapshot()).find((r) => r.id === 'memory/memory-key-2')!;
    await expect(rotateStorageKeys(s.db, keys, { batchSize: 3 })).rejects.toMatchObject({
      kind: 'Crypto',
      detail: { domain: 'memory', key: 'memory-key-2', version: 1 },
    });
    expect((await snapshot()).find((r) => r.id === 'memory/memory-key-2')).toEqual(bad);
    // The operator removes (or restores) the row; the re-run finishes the rest.
    await storage.domain('memory').delete('memory-key-2');
    expected.delete('memory|memory-key-2');
    expect(await rotateStorageKeys(s.db, keys)).toMatchObject({ done: true });
    await expectAllValuesIntact(storage);
  });

  it('writers running during the rotation leave no row behind', async () => {
    let stop = false;
    const writers = Array.from({ length: 3 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const key = `live-${w}-${i % 7}`;
        await storage.domain('sessions').put(key, enc(`w${w} i${i}`));
        expected.set(`sessions|${key}`, `w${w} i${i}`);
      }
    });
    const result = await rotateStorageKeys(s.db, keys, { batchSize: 2 });
    stop = true;
    await Promise.all(writers);
    expect(result).toMatchObject({ done: true, version: 2 });
    expect((await snapshot()).filter((r) => r.version !== 2)).toEqual([]);
    await expectAllValuesIntact(storage);
  });

  it('never rotates backwards', async () => {
    await rotateStorageKeys(s.db, keys);
    await expect(rotateStorageKeys(s.db, keys, { toVersion: 1 })).rejects.toMatchObject({ kind: 'Config' });
    expect(await rotateStorageKeys(s.db, keys, { toVersion: 3 })).toEqual({ resealed: STORAGE_DOMAINS.length * 5, done: true, version: 3 });
    await expectAllValuesIntact(storage);
  });
});
