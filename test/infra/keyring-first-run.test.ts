/** First run at a prompt: the passphrase is typed twice, and a mismatch creates nothing (a typo must not lock the owner out). */
import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { openDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';

const small = { m: 256, t: 1, p: 1 };

describe('the first run asks for the passphrase twice', () => {
  it('two different passphrases: refused with a clear error, no install row, and the next run starts fresh', async () => {
    const s = await openDatabase({ pgliteDir: 'memory://' });
    try {
      const e = await openKeyring(s.db, 'correct horse', { kdfParams: small, confirmNew: async () => 'correct hose' }).catch(
        (x: unknown) => x,
      );
      expect(e).toBeInstanceOf(AivyxError);
      expect((e as AivyxError).kind).toBe('Config');
      expect((e as AivyxError).message).toBe('the two passphrases differ: nothing was created');
      expect(await s.db.selectFrom('install').selectAll().execute()).toEqual([]);
      // Nothing was created, so the typo did not become the passphrase: the owner's real one works.
      const master = await openKeyring(s.db, 'battery staple', { kdfParams: small, confirmNew: async () => 'battery staple' });
      expect(master.keyCheckValue()).toMatch(/^[0-9a-f]+$/);
      master.destroy();
    } finally {
      await s.close();
    }
  });

  it('once the install exists the second prompt is never shown', async () => {
    const s = await openDatabase({ pgliteDir: 'memory://' });
    try {
      (await openKeyring(s.db, 'pass', { kdfParams: small })).destroy();
      let asked = 0;
      const again = await openKeyring(s.db, 'pass', {
        confirmNew: async () => {
          asked++;
          return 'other';
        },
      });
      again.destroy();
      expect(asked).toBe(0);
    } finally {
      await s.close();
    }
  });
});
