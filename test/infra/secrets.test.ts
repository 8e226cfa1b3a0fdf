import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runRotateCommand, runSecretsCommand } from '../../channels/cli/secrets-commands.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { deleteSecret, getSecret, listSecretNames, setSecret } from '../../infra/secrets.js';
import { SealedStorage, unlockStorageKeyring } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';

describe.each(openStorageBackends())('secrets on $name', (backend) => {
  let s: OpenDatabase;
  let storage: SealedStorage;
  beforeAll(async () => {
    s = await backend.open();
    (await openKeyring(s.db, 'pw', { kdfParams: { m: 256, t: 1, p: 1 } })).destroy();
    storage = SealedStorage.open(s.db, await unlockStorageKeyring(s.db, 'pw'));
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    await sql`delete from sealed_records`.execute(s.db);
  });

  it('set, get, list (names only, sorted), replace and delete', async () => {
    await setSecret(storage, 'telegram.token', 'tg-123');
    await setSecret(storage, 'IMAP_PASSWORD', ' spaces kept ');
    expect(await getSecret(storage, 'telegram.token')).toBe('tg-123');
    expect(await getSecret(storage, 'IMAP_PASSWORD')).toBe(' spaces kept ');
    expect(await getSecret(storage, 'missing')).toBeUndefined();
    expect(await listSecretNames(storage)).toEqual(['IMAP_PASSWORD', 'telegram.token']);
    await setSecret(storage, 'telegram.token', 'tg-456');
    expect(await getSecret(storage, 'telegram.token')).toBe('tg-456');
    expect(await deleteSecret(storage, 'telegram.token')).toBe(true);
    expect(await listSecretNames(storage)).toEqual(['IMAP_PASSWORD']);
    // Sealed: the database holds no plaintext.
    const raw = await s.db.selectFrom('sealed_records').selectAll().where('domain', '=', 'secrets').execute();
    for (const r of raw) expect(Buffer.from(r.ciphertext).includes(Buffer.from('spaces kept'))).toBe(false);
  });

  it('rejects bad names and empty values with Config errors', async () => {
    for (const bad of ['', '1abc', '_x', 'a b', 'a/b', 'x'.repeat(65), 'é']) {
      await expect(setSecret(storage, bad, 'v')).rejects.toMatchObject({
        kind: 'Config',
        message: expect.stringContaining('invalid secret name') as unknown,
      });
    }
    await expect(setSecret(storage, 'x'.repeat(64), 'v')).resolves.toBeUndefined();
    await expect(setSecret(storage, 'ok', '')).rejects.toMatchObject({ kind: 'Config' });
  });

  it('a tampered secret is a Crypto error naming it', async () => {
    await setSecret(storage, 'API_KEY', 'sk-1');
    await sql`update sealed_records set ciphertext = set_byte(ciphertext, 0, get_byte(ciphertext, 0) # 1) where key = 'API_KEY'`.execute(
      s.db,
    );
    await expect(getSecret(storage, 'API_KEY')).rejects.toMatchObject({ kind: 'Crypto', detail: { domain: 'secrets', key: 'API_KEY' } });
  });

  describe('CLI', () => {
    function io(stdin: string, prompt?: string) {
      const out: string[] = [];
      let prompted: string | undefined;
      return {
        out,
        get prompted() {
          return prompted;
        },
        deps: {
          storage,
          readStdin: () => Promise.resolve(stdin),
          ...(prompt === undefined
            ? {}
            : {
                prompt: (q: string) => {
                  prompted = q;
                  return Promise.resolve(prompt);
                },
              }),
          out: (x: string) => {
            out.push(x);
          },
        },
      };
    }

    it('secrets set reads stdin (trailing newline trimmed) or the prompt; list prints names only', async () => {
      const a = io('piped-value\n');
      expect(await runSecretsCommand(['set', 'FROM_PIPE'], a.deps)).toBe(0);
      expect(await getSecret(storage, 'FROM_PIPE')).toBe('piped-value');
      const b = io('ignored', 'typed-value');
      expect(await runSecretsCommand(['set', 'FROM_TTY'], b.deps)).toBe(0);
      expect(b.prompted).toBe('value for FROM_TTY: ');
      expect(await getSecret(storage, 'FROM_TTY')).toBe('typed-value');
      const c = io('');
      expect(await runSecretsCommand(['list'], c.deps)).toBe(0);
      expect(c.out.join('')).toBe('FROM_PIPE\nFROM_TTY\n');
      expect(c.out.join('')).not.toContain('value');
    });

    it('empty value, bad name and unknown subcommand are Config errors; nothing is stored', async () => {
      await expect(runSecretsCommand(['set', 'EMPTY'], io('\n').deps)).rejects.toMatchObject({
        kind: 'Config',
        message: expect.stringContaining('no value') as unknown,
      });
      await expect(runSecretsCommand(['set', '9bad'], io('v').deps)).rejects.toMatchObject({ kind: 'Config' });
      await expect(runSecretsCommand(['get', 'X'], io('').deps)).rejects.toMatchObject({ kind: 'Config' });
      await expect(runSecretsCommand(['set'], io('').deps)).rejects.toMatchObject({ kind: 'Config' });
      expect(await listSecretNames(storage)).toEqual([]);
    });

    it('storage rotate-keys re-seals and reports; secrets survive', async () => {
      await setSecret(storage, 'KEEP', 'me');
      const out: string[] = [];
      expect(
        await runRotateCommand(['rotate-keys'], {
          storage,
          out: (x) => {
            out.push(x);
          },
        }),
      ).toBe(0);
      expect(out.join('')).toContain('aivyx-v2-storage');
      expect(await getSecret(storage, 'KEEP')).toBe('me');
      await expect(runRotateCommand(['spin'], { storage, out: () => undefined })).rejects.toMatchObject({ kind: 'Config' });
    });
  });
});
