/**
 * What no host tool reaches below the Kernel tier, at any tier (docs/TOOLS.md "The data
 * directory"): aivyx's data directory — PGlite, the dev server's files, rest-token, codec-token,
 * the home lock — except its workspace folder; the passphrase file wherever it lives; and /proc,
 * where the worker's environment (AIVYX_PASSPHRASE), memory and open files are readable.
 */
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ProtectedPaths } from '../activities/tools/confinement.js';

/** Both spellings of `p`: as given (resolved) and with its symlinks resolved when it exists. */
function spellings(p: string): string[] {
  const lexical = resolve(p);
  let real: string | undefined;
  try {
    real = realpathSync(lexical);
  } catch {
    real = undefined;
  }
  return real === undefined || real === lexical ? [lexical] : [lexical, real];
}

/** The protected paths of a data directory `home` (which should exist) and an optional passphrase file. */
export function dataDirProtection(opts: {
  home: string;
  passphraseFile?: string | undefined;
  /** Other secrets on disk (the Temporal client certificate's key): no host tool reads them either. */
  secretFiles?: readonly (string | undefined)[];
}): ProtectedPaths {
  const files = [opts.passphraseFile, ...(opts.secretFiles ?? [])].filter((f): f is string => Boolean(f));
  const roots = [...spellings(opts.home), ...files.flatMap(spellings), '/proc'];
  // The workspace is spelled under the data directory, never through its own symlink: a workspace
  // linked back into the data directory must not make that part reachable.
  return { roots: [...new Set(roots)], exceptions: spellings(opts.home).map((h) => join(h, 'workspace')) };
}
