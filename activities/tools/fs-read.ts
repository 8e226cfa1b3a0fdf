/**
 * `fs.read`: reads a UTF-8 text file over its real (symlink-resolved) path, up to a byte cap. The
 * file is opened on that path without following its last component, and the open descriptor's
 * path is what the turn's grants and the data-directory rule are checked against (confinement.ts).
 */
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { realpath, type FileHandle } from 'node:fs/promises';
import { AivyxError } from '../../core/errors.js';
import { fsReadTool } from '../../core/tools/fs-read.js';
import { assertReachable, confinedScope, NO_PROTECTED_PATHS, openChecked, type ProtectedPaths } from './confinement.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Default and ceiling of `maxBytes`: 1 MiB keeps a file from flooding the model context and the history. */
export const FS_READ_DEFAULT_MAX_BYTES = 1024 * 1024;

/** Output of `fs.read`. `path` is the real path that was read; `bytes` counts the bytes returned. */
export interface FsReadOutput {
  path: string;
  content: string;
  bytes: number;
  truncated: boolean;
}

/** Options of `createFsReadTool`. */
export interface FsReadOptions {
  /** Ceiling for `maxBytes` (default 1 MiB); larger requests are clamped to it. */
  maxBytesLimit?: number;
  /** Paths no call may read (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
  /** Test hook: runs after the path is resolved and checked, just before it is opened (a race window). */
  beforeOpen?: (path: string) => Promise<void>;
}

const fail = toolErrorFor('fs.read');
const toolError = (message: string, cause?: unknown) => fail(message, cause === undefined ? {} : { cause });

/** An I/O failure on `path` in a person's words (no such file, permission denied…). */
export function ioMessage(e: unknown, path: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `no such file: ${path}`;
  if (code === 'EACCES' || code === 'EPERM') return `permission denied: ${path}`;
  if (code === 'ELOOP') return `too many symlinks, or a symlink appeared at ${path}`;
  return `${path}: ${(e as Error).message}`;
}

/** Resolves symlinks: the path the read really touches. */
async function realFile(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (e) {
    throw toolError(ioMessage(e, path), e);
  }
}

/**
 * Drops a trailing incomplete UTF-8 sequence, so a cut inside a multi-byte character does not
 * end the content with U+FFFD. Returns the byte length to keep.
 */
function utf8Boundary(buf: Uint8Array, length: number): number {
  let i = length;
  // Walk back over at most 3 continuation bytes to the lead byte of the last character.
  while (i > 0 && length - i < 3 && ((buf[i - 1] as number) & 0xc0) === 0x80) i--;
  if (i === 0) return length;
  const lead = buf[i - 1] as number;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return length - (i - 1) >= need ? length : i - 1;
}

/**
 * Reads at most `limit` bytes of an open file. Callers ask for one byte past their cap: that tells
 * "exactly the cap" from "more than the cap" without trusting stat.size (a file may grow meanwhile).
 */
export async function readUpTo(handle: FileHandle, limit: number, signal: AbortSignal): Promise<{ buf: Uint8Array; filled: number }> {
  const buf = new Uint8Array(limit);
  let filled = 0;
  while (filled < buf.length) {
    signal.throwIfAborted();
    const { bytesRead } = await handle.read(buf, filled, buf.length - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return { buf, filled };
}

/** Creates the `fs.read` implementation (reading is naturally idempotent). */
export function createFsReadTool(options: FsReadOptions = {}): ToolImplementation {
  const limit = options.maxBytesLimit ?? FS_READ_DEFAULT_MAX_BYTES;
  const paths = options.protectedPaths ?? NO_PROTECTED_PATHS;
  return implementTool(fsReadTool, {
    async resolveScope({ path }) {
      return confinedScope('fs.read', await realFile(path), paths);
    },
    async run(req, ctx) {
      const maxBytes = Math.min(req.maxBytes ?? limit, limit);
      ctx.signal.throwIfAborted();
      // Resolved again here (it may have changed since the scope check); checked, opened, and the
      // descriptor proven to be that path: what is read is what was checked.
      const path = await realFile(req.path);
      assertReachable('fs.read', 'fs.read', path, ctx.held, paths);
      await options.beforeOpen?.(path);
      let handle;
      try {
        handle = await openChecked('fs.read', path);
      } catch (e) {
        if (e instanceof AivyxError) throw e;
        throw toolError(ioMessage(e, path), e);
      }
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) throw toolError(`not a regular file: ${path}`);
        const { buf, filled } = await readUpTo(handle, maxBytes + 1, ctx.signal);
        const truncated = filled > maxBytes;
        const keep = truncated ? utf8Boundary(buf, maxBytes) : filled;
        const content = Buffer.from(buf.buffer, 0, keep).toString('utf8');
        const output: FsReadOutput = { path, content, bytes: keep, truncated };
        return { kind: 'completed', output, verified: 'NotApplicable' };
      } catch (e) {
        if (e instanceof AivyxError || ctx.signal.aborted) throw e;
        throw toolError(ioMessage(e, path), e);
      } finally {
        await handle.close();
      }
    },
  });
}
