/** Paths of modules handed to Temporal's workflow bundler, right both under tsx (`.ts`) and compiled (`dist/`, `.js`). */
import { fileURLToPath } from 'node:url';

/** The file at `relative` (without extension) from `moduleUrl`, with that module's own extension. */
export function sibling(moduleUrl: string, relative: string): string {
  const ext = moduleUrl.endsWith('.ts') ? '.ts' : '.js';
  return fileURLToPath(new URL(`${relative}${ext}`, moduleUrl));
}
