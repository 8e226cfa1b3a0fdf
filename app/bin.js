#!/usr/bin/env node
// `aivyx` on PATH (npm link / npx) and `npm run aivyx`: the compiled CLI in dist/ (`npm run build`,
// which the bootstrap runs), started in this process. When dist/ is missing or older than a source
// file (a developer's edit), the TypeScript runs through tsx instead, and a line says so.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBuildFresh } from './build-state.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
if (isBuildFresh(root)) {
  await import(join(root, 'dist', 'app', 'main.js'));
} else {
  process.stderr.write('aivyx: dist/ is missing or older than the sources: running through tsx (npm run build makes it fast)\n');
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'app', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
