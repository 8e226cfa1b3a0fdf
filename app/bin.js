#!/usr/bin/env node
// `aivyx` on PATH (npm link / npx): run the TypeScript entry point through tsx.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
const main = fileURLToPath(new URL('./main.ts', import.meta.url));
const r = spawnSync(process.execPath, ['--import', 'tsx', main, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
