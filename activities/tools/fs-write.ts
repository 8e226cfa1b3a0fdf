/**
 * `fs.write`: atomic write (temp file + rename in the same directory), verified by reading the
 * file back. Naturally idempotent: writing the same content again is the same effect.
 *
 * Every operation goes through an open descriptor of the real parent directory (confinement.ts):
 * the directory is checked, opened and proven to be the checked one, and the temp file, the
 * rename/link and the read-back address `<dir fd>/<name>`, so a symlink swapped into a parent
 * after the check cannot redirect the write.
 */
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, realpath, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AivyxError } from '../../core/errors.js';
import { fsWriteTool } from '../../core/tools/fs-write.js';
import {
  anchorDirectory,
  assertReachable,
  confinedScope,
  NO_PROTECTED_PATHS,
  type AnchoredDirectory,
  type ProtectedPaths,
} from './confinement.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Options of `createFsWriteTool`. */
export interface FsWriteOptions {
  /** Paths no call may write (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
  /** Test hook: runs after the target is resolved and checked, just before its directory is opened. */
  beforeOpen?: (target: string) => Promise<void>;
}

/** Output of `fs.write`. `path` is the real path written; `changed` is false when the content was already there. */
export interface FsWriteOutput {
  path: string;
  bytes: number;
  sha256: string;
  created: boolean;
  changed: boolean;
}

const toolError = toolErrorFor('fs.write');

function ioError(e: unknown, path: string): AivyxError {
  if (e instanceof AivyxError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  const what =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'EISDIR'
        ? 'is a directory'
        : code === 'ENOTDIR'
          ? 'a parent is not a directory'
          : (e as Error).message;
  return toolError(`${path}: ${what}`, { cause: e });
}

function sha256(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

function isCode(e: unknown, code: string): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === code;
}

/**
 * The real path a write to `path` lands on: the realpath of the file when it exists (writes go
 * through a symlink to its target, so the link survives), otherwise the realpath of the nearest
 * existing ancestor plus the missing segments. `missingDirs` says whether directories must be made.
 */
async function resolveTarget(path: string): Promise<{ target: string; missingDirs: boolean }> {
  try {
    return { target: await realpath(path), missingDirs: false };
  } catch (e) {
    if (!isCode(e, 'ENOENT')) throw ioError(e, path);
  }
  // A dangling symlink would be replaced (overwrite) or block (create) in confusing ways: refuse it.
  const dangling = await lstat(path).then(
    (s) => s.isSymbolicLink(),
    () => false,
  );
  if (dangling)
    throw toolError(`${path} is a symlink to a missing file`, { hint: 'write to the link target directly, or remove the link' });
  const missing: string[] = [basename(path)];
  let dir = dirname(path);
  for (;;) {
    try {
      const real = await realpath(dir);
      return { target: join(real, ...missing.reverse()), missingDirs: missing.length > 1 };
    } catch (e) {
      if (!isCode(e, 'ENOENT') || dir === '/') throw ioError(e, dir);
    }
    missing.push(basename(dir));
    dir = dirname(dir);
  }
}

/** The current content of the entry `name` in `dir` (never through a symlink), or undefined when there is none. */
async function currentContent(dir: AnchoredDirectory, name: string): Promise<{ content: Buffer; mode: number } | undefined> {
  let handle;
  try {
    handle = await open(dir.entry(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    if (isCode(e, 'ENOENT')) return undefined;
    if (isCode(e, 'ELOOP'))
      throw toolError(`${join(dir.path, name)} became a symlink`, { hint: 'nothing was written; write to the link target directly' });
    throw e;
  }
  try {
    const s = await handle.stat();
    if (!s.isFile()) throw toolError(`${join(dir.path, name)} exists and is not a regular file`);
    return { content: await handle.readFile(), mode: s.mode };
  } finally {
    await handle.close();
  }
}

/** Writes `content` to a fresh temp file in `dir` (O_EXCL: a planted name cannot redirect it); returns its name. */
async function writeTemp(dir: AnchoredDirectory, name: string, content: string, modeOf: number | undefined): Promise<string> {
  const temp = `.${name}.aivyx-${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(dir.entry(temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
  try {
    // Replacing a 0600 secrets file must not leave it world-readable: keep the old permission bits.
    if (modeOf !== undefined) await handle.chmod(modeOf & 0o7777);
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (e) {
    await handle.close();
    await unlink(dir.entry(temp)).catch(() => undefined);
    throw e;
  }
  await handle.close();
  return temp;
}

function exists(target: string, existingSha: string, wantedSha: string): AivyxError {
  return toolError(
    `${target} already exists with different content (sha256 ${existingSha.slice(0, 12)}…, wanted ${wantedSha.slice(0, 12)}…)`,
    {
      hint: 'use mode "overwrite" to replace it, or choose another path',
    },
  );
}

/** Creates the `fs.write` implementation. */
export function createFsWriteTool(options: FsWriteOptions = {}): ToolImplementation {
  const paths = options.protectedPaths ?? NO_PROTECTED_PATHS;
  return implementTool(fsWriteTool, {
    async resolveScope({ path }) {
      return confinedScope('fs.write', (await resolveTarget(path)).target, paths);
    },
    async run(req, ctx) {
      ctx.signal.throwIfAborted();
      const { target, missingDirs } = await resolveTarget(req.path);
      assertReachable('fs.write', 'fs.write', target, ctx.held, paths);
      const wanted = sha256(req.content);
      const bytes = Buffer.byteLength(req.content, 'utf8');
      const done = (created: boolean, changed: boolean, verified: 'Verified' | 'Unverified') => ({
        kind: 'completed' as const,
        output: { path: target, bytes, sha256: wanted, created, changed } satisfies FsWriteOutput,
        verified,
      });
      const name = basename(target);

      let dir: AnchoredDirectory | undefined;
      try {
        if (missingDirs) await mkdir(dirname(target), { recursive: true });
        await options.beforeOpen?.(target);
        dir = await anchorDirectory('fs.write', dirname(target));
        const before = await currentContent(dir, name);
        if (before !== undefined) {
          const beforeSha = sha256(before.content);
          // Already there (e.g. a retry after a successful attempt): the effect is in place, nothing to do.
          if (beforeSha === wanted) return done(false, false, 'Verified');
          if (req.mode === 'create') throw exists(target, beforeSha, wanted);
        }
        ctx.signal.throwIfAborted();
        const temp = await writeTemp(dir, name, req.content, before?.mode);
        try {
          if (req.mode === 'create') {
            // link() fails with EEXIST atomically, so a file created meanwhile is never clobbered.
            const anchored = dir;
            await link(anchored.entry(temp), anchored.entry(name)).catch(async (e: unknown) => {
              if (!isCode(e, 'EEXIST')) throw e;
              const raced = await currentContent(anchored, name);
              if (raced === undefined || sha256(raced.content) !== wanted)
                throw exists(target, raced ? sha256(raced.content) : 'missing', wanted);
            });
          } else {
            await rename(dir.entry(temp), dir.entry(name));
          }
        } finally {
          await unlink(dir.entry(temp)).catch(() => undefined);
        }
        // Best-effort fsync of the directory so the rename survives a power cut (not supported everywhere).
        await dir.handle.sync().catch(() => undefined);
        const after = await currentContent(dir, name);
        return done(before === undefined, true, after !== undefined && sha256(after.content) === wanted ? 'Verified' : 'Unverified');
      } catch (e) {
        if (ctx.signal.aborted && !(e instanceof AivyxError)) throw e;
        throw ioError(e, target);
      } finally {
        await dir?.close();
      }
    },
  });
}
