/**
 * Where the checkout is, whether this code runs as TypeScript (app/, through tsx) or compiled
 * (dist/app/): the nearest folder above this module with aivyx's package.json. The demo script
 * and the Temporal binaries in .venv are found from it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's root folder. */
export function projectRoot(from: string = fileURLToPath(import.meta.url)): string {
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'aivyx') return dir;
    if (dirname(dir) === dir) return join(dirname(fileURLToPath(import.meta.url)), '..');
  }
}
