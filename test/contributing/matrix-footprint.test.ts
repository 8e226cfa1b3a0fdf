/**
 * docs/CONTRIBUTING.md "What a real channel took": the Matrix channel is a folder and a registry line.
 * Nothing but channels/registry.ts (and tests) reaches into channels/matrix/, and the folder uses no
 * other channel's files — it stands on the contract, the ports and channels/kit alone.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const SOURCE_FOLDERS = ['app', 'core', 'machines', 'workflows', 'activities', 'infra', 'channels'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}
const imports = (file: string) => [...readFileSync(join(root, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!);

describe('the Matrix channel’s footprint (docs/CONTRIBUTING.md)', () => {
  const sources = SOURCE_FOLDERS.flatMap((f) => tsFiles(join(root, f)));
  const inFolder = sources.filter((f) => f.startsWith('channels/matrix/'));

  it('only the registry imports the channel', () => {
    const outside = sources.filter((f) => !f.startsWith('channels/matrix/') && imports(f).some((i) => i.includes('/matrix/')));
    expect(outside).toEqual(['channels/registry.ts']);
  });

  it('the folder imports no other channel, only the contract, the ports, the kit and shared channel text', () => {
    const foreign = inFolder.flatMap((f) =>
      imports(f)
        .filter((i) => /^\.\.\/(telegram|email|cli|rest)\//.test(i))
        .map((i) => `${f}: ${i}`),
    );
    expect(foreign).toEqual([]);
    expect(inFolder.length).toBe(15);
  });
});
