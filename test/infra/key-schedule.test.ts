import { argon2id } from '@noble/hashes/argon2.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_KDF_PARAMS, deriveMasterKey, deriveSubkey, installIdOf, KEY_DOMAINS, MasterKey } from '../../infra/crypto/index.js';
import { openDatabase, type OpenDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { createTestDatabase } from '../support/postgres.js';

const small = { m: 256, t: 1, p: 1 };

describe('primitives against published vectors', () => {
  it('HKDF-SHA256: RFC 5869 test case 1', () => {
    const okm = hkdf(sha256, hexToBytes('0b'.repeat(22)), hexToBytes('000102030405060708090a0b0c'), hexToBytes('f0f1f2f3f4f5f6f7f8f9'), 42);
    expect(bytesToHex(okm)).toBe('3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865');
  });

  it('Argon2id: RFC 9106 §5.3 vector (secret + associated data)', () => {
    const tag = argon2id(new Uint8Array(32).fill(1), new Uint8Array(16).fill(2), {
      m: 32,
      t: 3,
      p: 4,
      dkLen: 32,
      key: new Uint8Array(8).fill(3),
      personalization: new Uint8Array(12).fill(4),
    });
    expect(bytesToHex(tag)).toBe('0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659');
  });
});

describe('key schedule', () => {
  it('subkeys are HKDF(master, salt "aivyx-v1-storage", info domain), distinct per domain and version', async () => {
    const master = await deriveMasterKey('correct horse', new Uint8Array(16).fill(9), small);
    expect(master).toHaveLength(32);
    expect(deriveSubkey(master, 'audit')).toEqual(hkdf(sha256, master, utf8ToBytes('aivyx-v1-storage'), utf8ToBytes('audit'), 32));
    const hexes = new Set(KEY_DOMAINS.map((d) => bytesToHex(deriveSubkey(master, d))));
    expect(hexes.size).toBe(KEY_DOMAINS.length);
    expect(deriveSubkey(master, 'audit', 'aivyx-v2-storage')).not.toEqual(deriveSubkey(master, 'audit'));
    const mk = new MasterKey(master);
    expect(mk.subkey('payload')).toBe(mk.subkey('payload'));
    expect(mk.keyCheckValue()).not.toBe(bytesToHex(mk.subkey('audit')));
    expect(JSON.stringify({ mk })).toBe('{"mk":"[MasterKey]"}');
  });

  it("the install's identity: stable for a key, different for another, and unrelated to every subkey and the check value", async () => {
    const master = await deriveMasterKey('correct horse', new Uint8Array(16).fill(9), small);
    const id = installIdOf(master);
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(new MasterKey(master).installId()).toBe(id);
    // A key rotation's other schedule version re-seals rows, never the identity.
    expect(new MasterKey(master).atVersion('aivyx-v2-storage').installId()).toBe(id);
    const other = await deriveMasterKey('correct horse', new Uint8Array(16).fill(8), small);
    expect(installIdOf(other)).not.toBe(id);
    const mk = new MasterKey(master);
    for (const hex of [mk.keyCheckValue(), ...KEY_DOMAINS.map((d) => bytesToHex(deriveSubkey(master, d)))]) expect(hex).not.toContain(id);
  });

  it('empty passphrase is a Config error', async () => {
    await expect(deriveMasterKey('', new Uint8Array(16), small)).rejects.toMatchObject({ kind: 'Config' });
  });
});

describe('keyring', () => {
  let s: OpenDatabase;
  beforeAll(async () => {
    s = await openDatabase({ pgliteDir: 'memory://' });
  });
  afterAll(async () => {
    await s.close();
  });

  it('first run creates the install; same passphrase unlocks; wrong one changes nothing', async () => {
    await expect(openKeyring(s.db, '', { kdfParams: small })).rejects.toMatchObject({ kind: 'Config' });
    const a = await openKeyring(s.db, 'hunter2', { kdfParams: small });
    const row = await s.db.selectFrom('install').selectAll().execute();
    expect(row).toHaveLength(1);
    expect(JSON.parse(row[0]!.kdf_params)).toEqual(small);
    expect(row[0]!.kdf_salt).toMatch(/^[0-9a-f]{32}$/);
    const b = await openKeyring(s.db, 'hunter2');
    expect(b.subkey('audit')).toEqual(a.subkey('audit'));

    const before = await sql`select * from install`.execute(s.db);
    await expect(openKeyring(s.db, 'hunter3')).rejects.toMatchObject({
      kind: 'Crypto',
      message: 'wrong passphrase: it does not unlock this aivyx install',
      hint: 'check AIVYX_PASSPHRASE / the key file; nothing was changed',
    });
    expect((await sql`select * from install`.execute(s.db)).rows).toEqual(before.rows);
    expect((await sql<{ n: number }>`select count(*)::int as n from audit_entries`.execute(s.db)).rows[0]!.n).toBe(0);
    expect((await sql<{ n: number }>`select count(*)::int as n from tool_intents`.execute(s.db)).rows[0]!.n).toBe(0);
  });

  it('stores DEFAULT params (64 MiB, t=3, p=4) when none are given', async () => {
    const fresh = await openDatabase({ pgliteDir: 'memory://' });
    try {
      await openKeyring(fresh.db, 'default-params');
      const row = await fresh.db.selectFrom('install').select('kdf_params').executeTakeFirstOrThrow();
      expect(JSON.parse(row.kdf_params)).toEqual(DEFAULT_KDF_PARAMS);
    } finally {
      await fresh.close();
    }
  });

  it('concurrent first runs from two processes create one install (PostgreSQL)', async () => {
    const tdb = await createTestDatabase();
    const [x, y] = await Promise.all([openDatabase({ databaseUrl: tdb.url }), openDatabase({ databaseUrl: tdb.url })]);
    try {
      const [k1, k2] = await Promise.all([
        openKeyring(x.db, 'race', { kdfParams: small }),
        openKeyring(y.db, 'race', { kdfParams: small }),
      ]);
      expect(k1.subkey('secrets')).toEqual(k2.subkey('secrets'));
      expect(await x.db.selectFrom('install').selectAll().execute()).toHaveLength(1);
    } finally {
      await x.close();
      await y.close();
      await tdb.drop();
    }
  });
});
