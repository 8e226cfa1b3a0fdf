/**
 * `aivyx passphrase change` (issue "the everyday conversation"): the master key is re-wrapped under
 * the new passphrase, so everything sealed before opens after without being re-sealed; the old
 * passphrase stops working; a wrong current passphrase, a mismatch at the prompt or a concurrent
 * change changes nothing. Real PGlite, the real key schedule (small Argon2id parameters).
 */
import { describe, expect, it } from 'vitest';
import { runPassphraseCommand } from '../../channels/cli/passphrase-commands.js';
import { openDatabase } from '../../infra/db/index.js';
import { changePassphrase, openKeyring } from '../../infra/keyring.js';
import { SealedStorage } from '../../infra/storage/index.js';

const small = { m: 256, t: 1, p: 1 };

async function install() {
  const s = await openDatabase({ pgliteDir: 'memory://' });
  const master = await openKeyring(s.db, 'old horse', { kdfParams: small });
  await SealedStorage.open(s.db, master).domain('secrets').putJson('token', { v: 'sk-123' });
  const kcv = master.keyCheckValue();
  const installId = master.installId();
  master.destroy();
  const rows = () => s.db.selectFrom('sealed_records').select(['key', 'nonce', 'ciphertext']).orderBy('key').execute();
  const install = () => s.db.selectFrom('install').selectAll().executeTakeFirstOrThrow();
  return { ...s, kcv, installId, rows, install };
}

describe('changing the passphrase', () => {
  it('re-wraps the same master key: sealed rows are untouched and open under the new passphrase; the old one fails', async () => {
    const s = await install();
    try {
      const sealedBefore = await s.rows();
      await changePassphrase(s.db, 'old horse', 'new staple');
      expect(await s.rows()).toEqual(sealedBefore); // nothing re-sealed
      const row = await s.install();
      expect(row.wrapped_key).toMatch(/^[0-9a-f]{144}$/); // 24-byte nonce ‖ 32-byte key ‖ 16-byte tag
      expect(row.kcv).toBe(s.kcv);
      await expect(openKeyring(s.db, 'old horse')).rejects.toMatchObject({
        kind: 'Crypto',
        message: expect.stringMatching(/wrong passphrase/),
      });
      const master = await openKeyring(s.db, 'new staple');
      expect(await SealedStorage.open(s.db, master).domain('secrets').getJson('token')).toEqual({ v: 'sk-123' });
      master.destroy();

      // Again, from a wrapped key to a wrapped key.
      await changePassphrase(s.db, 'new staple', 'third time');
      await expect(openKeyring(s.db, 'new staple')).rejects.toMatchObject({ kind: 'Crypto' });
      const third = await openKeyring(s.db, 'third time');
      expect(third.keyCheckValue()).toBe(s.kcv);
      // The same install to Temporal: its task queue and namespace claim do not move with the passphrase.
      expect(third.installId()).toBe(s.installId);
      third.destroy();
    } finally {
      await s.close();
    }
  });

  it('a wrong current passphrase, an altered wrapped key and a concurrent change are refused and change nothing', async () => {
    const s = await install();
    try {
      await expect(changePassphrase(s.db, 'guess', 'mine now')).rejects.toMatchObject({ kind: 'Crypto' });
      expect((await s.install()).wrapped_key).toBeNull();
      await changePassphrase(s.db, 'old horse', 'new staple');
      const row = await s.install();

      // A flipped bit in the wrapped key: the right passphrase no longer opens it, and says so (no garbage key).
      const flipped = row.wrapped_key!.slice(0, -1) + (row.wrapped_key!.endsWith('0') ? '1' : '0');
      await s.db.updateTable('install').set({ wrapped_key: flipped }).execute();
      await expect(openKeyring(s.db, 'new staple')).rejects.toMatchObject({ kind: 'Crypto' });
      await s.db.updateTable('install').set({ wrapped_key: row.wrapped_key }).execute();

      // Two changes from the same state: the second finds the salt changed under it.
      const racing = changePassphrase(s.db, 'new staple', 'first wins');
      const losing = changePassphrase(s.db, 'new staple', 'second loses');
      const results = await Promise.allSettled([racing, losing]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const winner = results[0]!.status === 'fulfilled' ? 'first wins' : 'second loses';
      (await openKeyring(s.db, winner)).destroy();
    } finally {
      await s.close();
    }
  });

  it('the command: new passphrase from stdin, or typed twice (a mismatch changes nothing); the same one again is refused', async () => {
    const s = await install();
    try {
      const out: string[] = [];
      const base = {
        db: s.db,
        current: async () => 'old horse',
        readStdin: async () => 'from stdin\n',
        out: (t: string) => void out.push(t),
      };
      const answers = ['typed', 'typo'];
      await expect(runPassphraseCommand(['change'], { ...base, prompt: async () => answers.shift()! })).rejects.toThrow(
        'the two new passphrases differ: nothing was changed',
      );
      expect((await s.install()).wrapped_key).toBeNull();
      await expect(runPassphraseCommand(['change'], { ...base, readStdin: async () => 'old horse' })).rejects.toThrow(/is the current one/);
      await expect(runPassphraseCommand(['rotate'], base)).rejects.toThrow(/unknown passphrase command "rotate"/);
      expect(await runPassphraseCommand(['change'], base)).toBe(0);
      expect(out.join('')).toMatch(/^passphrase changed: the old one no longer unlocks this install/);
      (await openKeyring(s.db, 'from stdin')).destroy();
    } finally {
      await s.close();
    }
  });
});
