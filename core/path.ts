/**
 * Pure POSIX path normalization for the workflow-safe core: no `node:path`, no I/O.
 * Resolution is lexical only (symlinks are the activity's business: it must re-check
 * the real path). Anything ambiguous is refused rather than guessed.
 */
import { AivyxError } from './errors.js';

/** Why a path was refused, or the normalized path. */
export type PathNormalization = { ok: true; path: string } | { ok: false; message: string; hint: string };

/**
 * Normalizes an absolute POSIX path: collapses `//`, drops `.` segments and a trailing
 * `/`, resolves `..` lexically. Refuses relative paths, NUL bytes and any `..` that would
 * climb above `/` (clamping silently, as POSIX does, would hide an escape attempt).
 */
export function checkPosixPath(p: string): PathNormalization {
  if (p.includes('\0')) return { ok: false, message: `path contains a NUL byte`, hint: 'remove the NUL byte from the path' };
  if (!p.startsWith('/')) return { ok: false, message: `path "${p}" is not absolute`, hint: 'give the full path, starting with /' };
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length === 0)
        return { ok: false, message: `path "${p}" climbs above /`, hint: 'remove the ".." segments that go past the root' };
      out.pop();
      continue;
    }
    out.push(seg);
  }
  return { ok: true, path: '/' + out.join('/') };
}

/** Like {@link checkPosixPath} but throws `AivyxError('InvalidScope')` on refusal. */
export function normalizePosixPath(p: string): string {
  const r = checkPosixPath(p);
  if (!r.ok) throw new AivyxError('InvalidScope', r.message, { hint: r.hint });
  return r.path;
}

/** Like {@link normalizePosixPath} but returns `undefined` instead of throwing. */
export function tryNormalizePosixPath(p: string): string | undefined {
  const r = checkPosixPath(p);
  return r.ok ? r.path : undefined;
}

/** The segments of an already-normalized absolute path (`/` has none). */
export function pathSegments(normalized: string): string[] {
  return normalized === '/' ? [] : normalized.slice(1).split('/');
}
