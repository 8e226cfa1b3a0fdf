import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MasterKey } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { openRecord, recordAad, SealedStorage, StorageKeyring } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const dec = (b: Uint8Array): string => new TextDecoder().decode(b);

/** True when `needle` occurs anywhere in `hay`. */
function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  return Buffer.from(hay).indexOf(Buffer.from(needle)) >= 0;
}

describe.each(openStorageBackends())('sealed storage on $name', (backend) => {
  let s: OpenDatabase;
  let storage: SealedStorage;
  const keys = new StorageKeyring(new Uint8Array(32).fill(5));
  beforeAll(async () => {
    s = await backend.open();
    storage = SealedStorage.open(s.db, keys);
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    await sql`delete from sealed_records`.execute(s.db);
  });

  it('round trips bytes and JSON; missing keys are undefined; handles are cached', async () => {
    const h = storage.domain('sessions');
    expect(storage.domain('sessions')).toBe(h);
    expect(await h.get('nope')).toBeUndefined();
    await h.put('s/1', enc('hello'));
    expect(dec((await h.get('s/1'))!)).toBe('hello');
    await h.put('s/1', enc('replaced'));
    expect(dec((await h.get('s/1'))!)).toBe('replaced');
    await h.put('empty', new Uint8Array(0));
    expect(await h.get('empty')).toEqual(new Uint8Array(0));
    await h.putJson('j', { a: [1, 'é'], b: null });
    expect(await h.getJson('j')).toEqual({ a: [1, 'é'], b: null });
    // The same key in another domain is a different record.
    expect(await storage.domain('memory').get('s/1')).toBeUndefined();
  });

  it('a plain v1 MasterKey reads what the keyring wrote (same v1 subkeys)', async () => {
    await storage.domain('memory').put('m', enc('v1'));
    const plain = SealedStorage.open(s.db, new MasterKey(new Uint8Array(32).fill(5)));
    expect(dec((await plain.domain('memory').get('m'))!)).toBe('v1');
  });

  it('delete reports whether a row existed', async () => {
    const h = storage.domain('memory');
    await h.put('k', enc('v'));
    expect(await h.delete('k')).toBe(true);
    expect(await h.delete('k')).toBe(false);
    expect(await h.get('k')).toBeUndefined();
  });

  it('scan streams the prefix in bytewise key order, batch by batch', async () => {
    const h = storage.domain('channel_state');
    const keysIn = ['a/10', 'a/2', 'a/1', 'a/B', 'a/b', 'a_x', 'a', 'b/1', 'a/%', 'a/\u00e9'];
    for (const k of keysIn) await h.put(k, enc(`v:${k}`));
    await storage.domain('sessions').put('a/0', enc('other domain'));
    const seen: string[] = [];
    for await (const { key, value } of h.scan('a/', { batchSize: 2 })) {
      expect(dec(value)).toBe(`v:${key}`);
      seen.push(key);
    }
    // Collation "C": bytewise, so '%' < '1' < 'B' < 'b' < 'é'; "a_x" and "a" are not in 'a/'.
    expect(seen).toEqual(['a/%', 'a/1', 'a/10', 'a/2', 'a/B', 'a/b', 'a/\u00e9']);
    const all: string[] = [];
    for await (const { key } of h.scan('')) all.push(key);
    expect(all).toHaveLength(keysIn.length);
    // LIKE metacharacters in the prefix are literal.
    const pct: string[] = [];
    for await (const { key } of h.scan('a/%')) pct.push(key);
    expect(pct).toEqual(['a/%']);
  });

  it('scan fetches lazily: stopping early leaves later batches unread', async () => {
    const h = storage.domain('memory');
    for (let i = 0; i < 25; i++) await h.put(`k${String(i).padStart(2, '0')}`, enc(String(i)));
    // Corrupt a row in the third batch: a consumer that stops after the first batch never sees it.
    await sql`update sealed_records set ciphertext = '\\x00'::bytea || substring(ciphertext from 2) where domain = 'memory' and key = 'k22'`.execute(
      s.db,
    );
    const got: string[] = [];
    for await (const { key } of h.scan('k', { batchSize: 10 })) {
      got.push(key);
      if (got.length === 10) break;
    }
    expect(got).toHaveLength(10);
    await expect(async () => {
      for await (const _ of h.scan('k', { batchSize: 10 })) void _;
    }).rejects.toMatchObject({ kind: 'Crypto', detail: { domain: 'memory', key: 'k22' } });
  });

  it('stored bytes never contain the plaintext, and nonces are fresh per write', async () => {
    const secret = 'correct horse battery staple';
    await storage.domain('secrets').put('pw', enc(secret));
    const first = await s.db.selectFrom('sealed_records').selectAll().where('key', '=', 'pw').executeTakeFirstOrThrow();
    expect(first.nonce).toHaveLength(24);
    expect(first.ciphertext).toHaveLength(secret.length + 16);
    expect(first.version).toBe(1);
    expect(contains(first.ciphertext, enc(secret))).toBe(false);
    expect(contains(first.nonce, enc(secret.slice(0, 8)))).toBe(false);
    await storage.domain('secrets').put('pw', enc(secret));
    const second = await s.db.selectFrom('sealed_records').selectAll().where('key', '=', 'pw').executeTakeFirstOrThrow();
    expect(Buffer.from(second.nonce).equals(Buffer.from(first.nonce))).toBe(false);
  });

  describe('bad rows are Crypto errors naming domain and key, never garbage', () => {
    beforeEach(async () => {
      await storage.domain('sessions').put('alice', enc('alice data'));
      await storage.domain('sessions').put('bob', enc('bob data'));
    });

    it('a row copied to another key fails to open', async () => {
      await sql`update sealed_records set nonce = src.nonce, ciphertext = src.ciphertext
        from sealed_records src where src.domain = 'sessions' and src.key = 'alice'
        and sealed_records.domain = 'sessions' and sealed_records.key = 'bob'`.execute(s.db);
      await expect(storage.domain('sessions').get('bob')).rejects.toMatchObject({
        kind: 'Crypto',
        message: expect.stringContaining('sessions/bob') as unknown,
        detail: { domain: 'sessions', key: 'bob', version: 1 },
      });
      expect(dec((await storage.domain('sessions').get('alice'))!)).toBe('alice data');
    });

    it('a row copied to another domain fails to open', async () => {
      await sql`insert into sealed_records (domain, key, version, nonce, ciphertext)
        select 'memory', key, version, nonce, ciphertext from sealed_records where domain = 'sessions' and key = 'alice'`.execute(s.db);
      await expect(storage.domain('memory').get('alice')).rejects.toMatchObject({
        kind: 'Crypto',
        detail: { domain: 'memory', key: 'alice' },
      });
    });

    it('a row relabelled with another version fails to open', async () => {
      await sql`update sealed_records set version = 2 where key = 'alice'`.execute(s.db);
      await expect(storage.domain('sessions').get('alice')).rejects.toMatchObject({
        kind: 'Crypto',
        detail: { domain: 'sessions', key: 'alice', version: 2 },
      });
    });

    it('one flipped ciphertext byte fails to open', async () => {
      await sql`update sealed_records set ciphertext = set_byte(ciphertext, 3, get_byte(ciphertext, 3) # 1) where key = 'alice'`.execute(
        s.db,
      );
      await expect(storage.domain('sessions').get('alice')).rejects.toMatchObject({
        kind: 'Crypto',
        message: expect.stringContaining('sessions/alice') as unknown,
      });
    });

    it('a flipped nonce byte or tag byte fails to open', async () => {
      await sql`update sealed_records set nonce = set_byte(nonce, 0, get_byte(nonce, 0) # 128) where key = 'alice'`.execute(s.db);
      await expect(storage.domain('sessions').get('alice')).rejects.toMatchObject({ kind: 'Crypto' });
      await sql`update sealed_records set ciphertext = set_byte(ciphertext, length(ciphertext) - 1, get_byte(ciphertext, length(ciphertext) - 1) # 1) where key = 'bob'`.execute(
        s.db,
      );
      await expect(storage.domain('sessions').get('bob')).rejects.toMatchObject({ kind: 'Crypto' });
    });

    it('truncated ciphertexts (by one byte, to below the tag, to nothing) fail to open', async () => {
      await sql`update sealed_records set ciphertext = substring(ciphertext from 1 for length(ciphertext) - 1) where key = 'alice'`.execute(
        s.db,
      );
      await expect(storage.domain('sessions').get('alice')).rejects.toMatchObject({ kind: 'Crypto', detail: { key: 'alice' } });
      await sql`update sealed_records set ciphertext = substring(ciphertext from 1 for 5) where key = 'bob'`.execute(s.db);
      await expect(storage.domain('sessions').get('bob')).rejects.toMatchObject({ kind: 'Crypto', detail: { key: 'bob' } });
      await sql`update sealed_records set ciphertext = ''::bytea, nonce = substring(nonce from 1 for 12) where key = 'bob'`.execute(s.db);
      await expect(storage.domain('sessions').get('bob')).rejects.toMatchObject({ kind: 'Crypto', detail: { key: 'bob' } });
    });

    it('a different master key cannot open the rows', async () => {
      const other = SealedStorage.open(s.db, new StorageKeyring(new Uint8Array(32).fill(6)));
      await expect(other.domain('sessions').get('alice')).rejects.toMatchObject({ kind: 'Crypto' });
    });

    it('a failed read overwrites nothing', async () => {
      await sql`update sealed_records set ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) where key = 'alice'`.execute(
        s.db,
      );
      const before = await s.db.selectFrom('sealed_records').selectAll().where('key', '=', 'alice').executeTakeFirstOrThrow();
      await expect(storage.domain('sessions').get('alice')).rejects.toMatchObject({ kind: 'Crypto' });
      const after = await s.db.selectFrom('sealed_records').selectAll().where('key', '=', 'alice').executeTakeFirstOrThrow();
      expect(Buffer.from(after.ciphertext).equals(Buffer.from(before.ciphertext))).toBe(true);
    });
  });

  it('rejects keys PostgreSQL text cannot hold exactly', async () => {
    const h = storage.domain('memory');
    await expect(h.put('', enc('x'))).rejects.toMatchObject({ kind: 'Config' });
    await expect(h.put('a\u0000b', enc('x'))).rejects.toMatchObject({ kind: 'Config' });
    await expect(h.put('\ud800', enc('x'))).rejects.toMatchObject({ kind: 'Config' });
    await expect(h.get('x'.repeat(1025))).rejects.toMatchObject({ kind: 'Config' });
  });
});

describe('record AAD', () => {
  it('is length-prefixed so different (domain, key) splits never collide', () => {
    expect(recordAad('a', 'b/c', 1)).not.toEqual(recordAad('a/b', 'c', 1));
    expect(Buffer.from(recordAad('sessions', 'k', 2)).toString('hex')).toBe(
      Buffer.concat([
        Buffer.from('aivyx-sealed-record\0'),
        Buffer.from([0, 0, 0, 2, 0, 0, 0, 8]),
        Buffer.from('sessions'),
        Buffer.from([0, 0, 0, 1]),
        Buffer.from('k'),
      ]).toString('hex'),
    );
  });

  it('openRecord rejects a nonce of the wrong length', () => {
    expect(() => openRecord(new Uint8Array(32), 'memory', 'k', 1, { nonce: new Uint8Array(12), ciphertext: new Uint8Array(32) })).toThrow(
      /memory\/k/,
    );
  });
});
