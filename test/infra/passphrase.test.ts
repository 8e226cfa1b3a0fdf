import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolvePassphrase } from '../../infra/passphrase.js';

describe('resolvePassphrase', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aivyx-pp-'));

  it('prefers AIVYX_PASSPHRASE, then the key file, then the prompt', async () => {
    const file = join(dir, 'key');
    writeFileSync(file, 'from-file\n');
    chmodSync(file, 0o600);
    expect(await resolvePassphrase({ env: { AIVYX_PASSPHRASE: 'env', AIVYX_PASSPHRASE_FILE: file } })).toBe('env');
    expect(await resolvePassphrase({ env: { AIVYX_PASSPHRASE_FILE: file } })).toBe('from-file');
    expect(await resolvePassphrase({ env: {}, prompt: () => Promise.resolve('typed') })).toBe('typed');
  });

  it('refuses a group/other-readable key file and a missing source', async () => {
    const file = join(dir, 'open');
    writeFileSync(file, 'x');
    chmodSync(file, 0o644);
    await expect(resolvePassphrase({ env: { AIVYX_PASSPHRASE_FILE: file } })).rejects.toMatchObject({ kind: 'Config' });
    await expect(resolvePassphrase({ env: {} })).rejects.toMatchObject({ kind: 'Config' });
    await expect(resolvePassphrase({ env: { AIVYX_PASSPHRASE: '' } })).rejects.toMatchObject({ kind: 'Config' });
  });
});
