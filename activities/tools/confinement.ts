/**
 * Where host tools may act: the data-directory rule and the fd-based checks of what was really
 * opened (docs/TOOLS.md "Canonical forms and confinement").
 *
 * - {@link ProtectedPaths}: canonical paths no tool may touch below Kernel (aivyx's data directory
 *   except its workspace folder, the passphrase file, the worker's /proc). A call that resolves
 *   into them needs `kernel.data_dir:<path>`, a scope only the Kernel ceiling holds, so the
 *   activity's scope re-check denies it (`Denied`, audited as `ScopeDenied`).
 * - Check and use on the same object: a file is opened without following its last component, on
 *   the path that was checked, and the path of the open descriptor (Linux: `/proc/self/fd/<fd>`)
 *   must be that path; writes, renames and deletes go through an open descriptor of the parent
 *   directory (`/proc/self/fd/<dirfd>/<name>`), so a symlink swapped into a parent between the
 *   check and the use cannot redirect them. What was opened is then checked against the turn's
 *   grants (`ctx.held`) and the protected paths once more.
 * - Without `/proc/self/fd` (macOS, BSD, a Linux without /proc), the opened object is compared by
 *   device and inode with the checked path, which must still resolve to itself; directory-relative
 *   operations fall back to the checked path, so a swap in that narrow window is not caught there.
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, type FileHandle } from 'node:fs/promises';
import { CapabilitySet } from '../../core/capability/capability-set.js';
import { DATA_DIR_SCOPE_BASE } from '../../core/capability/scope.js';
import { AivyxError } from '../../core/errors.js';

/** Canonical (real, absolute) paths that no tool may reach below the Kernel tier. */
export interface ProtectedPaths {
  /** Each root is denied together with everything under it. */
  roots: readonly string[];
  /** Subtrees of a root that stay reachable (the workspace folder); a root inside one is still denied. */
  exceptions: readonly string[];
}

/** Nothing protected (tests that run tools outside a data directory). */
export const NO_PROTECTED_PATHS: ProtectedPaths = Object.freeze({ roots: Object.freeze([]), exceptions: Object.freeze([]) });

/** True when `p` is `dir` or lies under it. */
export function isWithin(p: string, dir: string): boolean {
  return p === dir || dir === '/' || p.startsWith(`${dir}/`);
}

/**
 * True when the canonical path `p` is protected: the innermost root or exception containing it
 * decides (a root wins a tie), so the workspace inside the data directory is reachable and a
 * passphrase file inside the workspace is not.
 */
export function isProtectedPath(p: string, paths: ProtectedPaths): boolean {
  let depth = -1;
  let protectedHere = false;
  for (const root of paths.roots) {
    if (isWithin(p, root) && root.length >= depth) [depth, protectedHere] = [root.length, true];
  }
  for (const e of paths.exceptions) {
    if (isWithin(p, e) && e.length > depth) [depth, protectedHere] = [e.length, false];
  }
  return protectedHere;
}

/** True when a protected root lies strictly inside `p` (deleting `p` recursively would delete it). */
export function containsProtectedPath(p: string, paths: ProtectedPaths): boolean {
  return paths.roots.some((root) => root !== p && isWithin(root, p));
}

/** The scope a call into the data directory resolves to: held by Kernel only. */
export function dataDirScope(p: string): string {
  return `${DATA_DIR_SCOPE_BASE}:${p}`;
}

/** `<base>:<p>`, or the Kernel-only data-directory scope when `p` is protected. */
export function confinedScope(base: string, p: string, paths: ProtectedPaths): string {
  return isProtectedPath(p, paths) ? dataDirScope(p) : `${base}:${p}`;
}

/** Why `p` may not be used by a call holding `held` for `base`, or undefined when it may. */
function refusal(base: string, p: string, held: readonly string[], paths: ProtectedPaths): string | undefined {
  if (isProtectedPath(p, paths))
    return `${p} is inside aivyx's data directory (or another protected path), which no tool reaches below the Kernel tier`;
  let granted = false;
  try {
    granted = CapabilitySet.fromJSON([...held]).grants(`${base}:${p}`);
  } catch {
    granted = false; // a path that cannot be written as a scope is granted by nothing
  }
  return granted
    ? undefined
    : `${p} is not covered by this turn's ${base} grants (it changed between the scope check and its use, or lies outside them)`;
}

/** Throws CapabilityDenied unless the turn's grants cover `base:<p>` and `p` is not protected. */
export function assertReachable(tool: string, base: string, p: string, held: readonly string[], paths: ProtectedPaths): void {
  const why = refusal(base, p, held, paths);
  if (why === undefined) return;
  throw new AivyxError('CapabilityDenied', `${tool}: ${why}`, {
    hint: isProtectedPath(p, paths)
      ? 'the data directory holds keys, tokens and the database; keep files for the assistant in its workspace folder'
      : 'ask again with a path inside the granted tree',
    detail: { tool, scope: isProtectedPath(p, paths) ? dataDirScope(p) : `${base}:${p}` },
  });
}

/** True where `/proc/self/fd/<fd>` names an open descriptor's path (Linux with /proc). */
export const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY, O_DIRECTORY } = constants;

function changed(tool: string, p: string): AivyxError {
  return new AivyxError('CapabilityDenied', `${tool}: ${p} changed between the check and its use (a symlink or directory was swapped in)`, {
    hint: 'nothing was read or written; ask again once the path is stable',
    detail: { tool, path: p, raced: true },
  });
}

/** The path of an open descriptor (Linux), or undefined where the kernel cannot say. */
export async function descriptorPath(handle: FileHandle): Promise<string | undefined> {
  if (!PROC_FD) return undefined;
  return readlink(`/proc/self/fd/${handle.fd}`);
}

/**
 * Checks that `handle` is the object at `p`: by its descriptor path on Linux, else by device and
 * inode against `p`, which must still resolve to itself. Throws CapabilityDenied when it is not.
 */
async function assertOpenedIs(tool: string, handle: FileHandle, p: string): Promise<void> {
  const opened = await descriptorPath(handle);
  if (opened !== undefined) {
    if (opened !== p) throw changed(tool, p);
    return;
  }
  const [fd, now, real] = await Promise.all([handle.stat(), lstat(p), realpath(p).catch(() => undefined)]);
  if (real !== p || fd.dev !== now.dev || fd.ino !== now.ino) throw changed(tool, p);
}

/**
 * Opens the checked, symlink-free path `p` without following its last component (O_NOFOLLOW;
 * non-blocking, so a FIFO cannot hang the read; no controlling terminal) and proves the
 * descriptor is `p`. `flags` adds to O_RDONLY.
 */
export async function openChecked(tool: string, p: string, flags = 0): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | flags);
  } catch (e) {
    // `p` was resolved without symlinks: a link there now (ELOOP, or ENOTDIR for a directory) was swapped in after the check.
    const code = (e as NodeJS.ErrnoException).code;
    if (
      (code === 'ELOOP' || code === 'ENOTDIR') &&
      (await lstat(p).then(
        (s) => s.isSymbolicLink(),
        () => false,
      ))
    )
      throw changed(tool, p);
    throw e;
  }
  try {
    await assertOpenedIs(tool, handle, p);
    return handle;
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/** An open directory that later operations go through by name. */
export interface AnchoredDirectory {
  /** The directory's canonical path (what was checked). */
  path: string;
  /** Where to address entries: `/proc/self/fd/<fd>` on Linux (immune to swaps), else `path`. */
  via: string;
  /** `via` joined with an entry name. */
  entry(name: string): string;
  handle: FileHandle;
  close(): Promise<void>;
}

/** Opens directory `dir` (canonical, checked) as an anchor for entry operations; proves it is `dir`. */
export async function anchorDirectory(tool: string, dir: string): Promise<AnchoredDirectory> {
  const handle = await openChecked(tool, dir, O_DIRECTORY);
  const via = PROC_FD ? `/proc/self/fd/${handle.fd}` : dir;
  return { path: dir, via, entry: (name) => (via === '/' ? `/${name}` : `${via}/${name}`), handle, close: () => handle.close() };
}

/** `lstat` of a path (an anchored entry), or undefined when it does not exist. */
export async function lstatOrAbsent(p: string): Promise<Stats | undefined> {
  try {
    return await lstat(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw e;
  }
}
