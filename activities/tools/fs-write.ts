/**
 * `fs.write`: atomic write (temp file + rename in the same directory), verified by reading the
 * file back. Naturally idempotent: writing the same content again is the same effect.
 */
import { createHash, randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, readFile, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { AivyxError } from '../../core/errors.js';
import { fsWriteTool, parseFsWriteInput } from '../../core/tool-catalog.js';
import type { ToolImplementation } from './tool-implementation.js';

/** Output of `fs.write`. `path` is the real path written; `changed` is false when the content was already there. */
export interface FsWriteOutput {
  path: string;
  bytes: number;
  sha256: string;
  created: boolean;
  changed: boolean;
}

function toolError(message: string, options: { cause?: unknown; hint?: string } = {}): AivyxError {
  return new AivyxError('Tool', `fs.write: ${message}`, { detail: { tool: 'fs.write' }, ...options });
}

function ioError(e: unknown, path: string): AivyxError {
  if (e instanceof AivyxError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  const what = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : code === 'ENOTDIR' ? 'a parent is not a directory' : (e as Error).message;
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
  const dangling = await lstat(path).then((s) => s.isSymbolicLink(), () => false);
  if (dangling) throw toolError(`${path} is a symlink to a missing file`, { hint: 'write to the link target directly, or remove the link' });
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

/** The current content of `target`, or undefined when there is no file. */
async function currentContent(target: string): Promise<Buffer | undefined> {
  try {
    const s = await stat(target);
    if (!s.isFile()) throw toolError(`${target} exists and is not a regular file`);
    return await readFile(target);
  } catch (e) {
    if (isCode(e, 'ENOENT')) return undefined;
    throw ioError(e, target);
  }
}

/** Writes `content` to a fresh temp file beside `target` (O_EXCL: a planted name cannot redirect it). */
async function writeTemp(target: string, content: string, modeOf: number | undefined): Promise<string> {
  const temp = join(dirname(target), `.${basename(target)}.aivyx-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', 0o666);
  try {
    // Replacing a 0600 secrets file must not leave it world-readable: keep the old permission bits.
    if (modeOf !== undefined) await handle.chmod(modeOf & 0o7777);
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (e) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw e;
  }
  await handle.close();
  return temp;
}

function exists(target: string, existingSha: string, wantedSha: string): AivyxError {
  return toolError(`${target} already exists with different content (sha256 ${existingSha.slice(0, 12)}…, wanted ${wantedSha.slice(0, 12)}…)`, {
    hint: 'use mode "overwrite" to replace it, or choose another path',
  });
}

/** Creates the `fs.write` implementation. */
export function createFsWriteTool(): ToolImplementation {
  return {
    descriptor: fsWriteTool,
    async resolveScope(input) {
      const { path } = parseFsWriteInput(input);
      return `fs.write:${(await resolveTarget(path)).target}`;
    },
    async run(input, ctx) {
      const req = parseFsWriteInput(input);
      ctx.signal.throwIfAborted();
      const { target, missingDirs } = await resolveTarget(req.path);
      const wanted = sha256(req.content);
      const bytes = Buffer.byteLength(req.content, 'utf8');
      const done = (created: boolean, changed: boolean, verified: 'Verified' | 'Unverified') => ({
        kind: 'completed' as const,
        output: { path: target, bytes, sha256: wanted, created, changed } satisfies FsWriteOutput,
        verified,
      });

      try {
        if (missingDirs) await mkdir(dirname(target), { recursive: true });
        const before = await currentContent(target);
        if (before !== undefined) {
          const beforeSha = sha256(before);
          // Already there (e.g. a retry after a successful attempt): the effect is in place, nothing to do.
          if (beforeSha === wanted) return done(false, false, 'Verified');
          if (req.mode === 'create') throw exists(target, beforeSha, wanted);
        }
        ctx.signal.throwIfAborted();
        const modeOf = before === undefined ? undefined : (await stat(target)).mode;
        const temp = await writeTemp(target, req.content, modeOf);
        try {
          if (req.mode === 'create') {
            // link() fails with EEXIST atomically, so a file created meanwhile is never clobbered.
            await link(temp, target).catch(async (e: unknown) => {
              if (!isCode(e, 'EEXIST')) throw e;
              const raced = await currentContent(target);
              if (raced === undefined || sha256(raced) !== wanted) throw exists(target, raced ? sha256(raced) : 'missing', wanted);
            });
          } else {
            await rename(temp, target);
          }
        } finally {
          await unlink(temp).catch(() => undefined);
        }
        await syncDir(dirname(target));
        const after = await currentContent(target);
        return done(before === undefined, true, after !== undefined && sha256(after) === wanted ? 'Verified' : 'Unverified');
      } catch (e) {
        if (ctx.signal.aborted && !(e instanceof AivyxError)) throw e;
        throw ioError(e, target);
      }
    },
  };
}

/** Best-effort fsync of a directory so the rename survives a power cut (not supported everywhere). */
async function syncDir(dir: string): Promise<void> {
  try {
    const h = await open(dir, 'r');
    await h.sync().finally(() => h.close());
  } catch {
    // Some filesystems refuse fsync on directories; the write itself is already durable.
  }
}
