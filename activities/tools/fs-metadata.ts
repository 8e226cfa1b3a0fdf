/**
 * `fs.metadata`: lstat plus realpath of one path. Read-only (naturally idempotent), NotApplicable.
 * The scope is re-derived over the real path: a symlink in a granted tree that points outside it
 * needs the grant for its target, because realPath reveals the target.
 */
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { realpath, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { AivyxError } from '../../core/errors.js';
import { fsMetadataTool } from '../../core/tools/fs-metadata.js';
import {
  anchorDirectory,
  assertReachable,
  dataDirScope,
  isProtectedPath,
  lstatOrAbsent,
  NO_PROTECTED_PATHS,
  type ProtectedPaths,
} from './confinement.js';
import { entryType, resolveEntry, type FsEntryType } from './fs-delete.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Output of `fs.metadata`; for a symlink, `target` describes what it points to (absent when dangling). */
export interface FsMetadataOutput {
  path: string;
  exists: boolean;
  type?: FsEntryType;
  size?: number;
  /** Permission bits as an octal string, e.g. "644". */
  mode?: string;
  mtime?: string;
  realPath?: string;
  target?: { type: FsEntryType; size: number } | null;
}

/** Options of `createFsMetadataTool`. */
export interface FsMetadataOptions {
  /** Paths whose metadata no call may see (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
}

const fail = toolErrorFor('fs.metadata');
const toolError = (message: string, cause?: unknown) => fail(message, cause === undefined ? {} : { cause });

function isCode(e: unknown, ...codes: string[]): boolean {
  return codes.includes((e as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/** The real path a metadata call reveals: the fully resolved path, else (dangling or missing) the entry itself. */
async function realOrEntry(path: string): Promise<{ real: string; resolved: boolean }> {
  try {
    return { real: await realpath(path), resolved: true };
  } catch (e) {
    if (!isCode(e, 'ENOENT', 'ENOTDIR', 'ELOOP')) throw toolError(`${path}: ${(e as Error).message}`, e);
    return { real: await resolveEntry(path, 'fs.metadata'), resolved: false };
  }
}

/** Creates the `fs.metadata` implementation. */
export function createFsMetadataTool(options: FsMetadataOptions = {}): ToolImplementation {
  const paths = options.protectedPaths ?? NO_PROTECTED_PATHS;
  return implementTool(fsMetadataTool, {
    async resolveScope({ path }) {
      const entry = await resolveEntry(path, 'fs.metadata');
      const { real } = await realOrEntry(path);
      // A link's own metadata (mtime, mode) says something about where the link is: both must be outside the data directory.
      const inDataDir = [entry, real].find((p) => isProtectedPath(p, paths));
      return inDataDir === undefined ? `fs.metadata:${real}` : dataDirScope(inDataDir);
    },
    async run({ path }, ctx) {
      ctx.signal.throwIfAborted();
      // The entry's parent is opened and proven; the entry is looked at through that descriptor.
      const entry = await resolveEntry(path, 'fs.metadata');
      let dir;
      try {
        dir = await anchorDirectory('fs.metadata', dirname(entry));
      } catch (e) {
        if (isCode(e, 'ENOENT', 'ENOTDIR')) {
          assertReachable('fs.metadata', 'fs.metadata', entry, ctx.held, paths);
          return { kind: 'completed', output: { path, exists: false } satisfies FsMetadataOutput, verified: 'NotApplicable' };
        }
        if (e instanceof AivyxError) throw e;
        throw toolError(`${path}: ${(e as Error).message}`, e);
      }
      try {
        const via = entry === '/' ? '/' : dir.entry(basename(entry));
        const l = await lstatOrAbsent(via).catch((e: unknown) => Promise.reject(toolError(`${path}: ${(e as Error).message}`, e)));
        assertReachable('fs.metadata', 'fs.metadata', entry, ctx.held, paths);
        if (l === undefined)
          return { kind: 'completed', output: { path, exists: false } satisfies FsMetadataOutput, verified: 'NotApplicable' };
        const type = entryType(l);
        // A symlink reveals its target: resolved through the descriptor, then checked like the entry.
        const t = type === 'symlink' ? await stat(via).catch(() => undefined) : undefined;
        const real = type === 'symlink' ? (t === undefined ? entry : await realpath(via).catch(() => entry)) : entry;
        assertReachable('fs.metadata', 'fs.metadata', real, ctx.held, paths);
        const output: FsMetadataOutput = {
          path,
          exists: true,
          type,
          size: l.size,
          mode: (l.mode & 0o7777).toString(8),
          mtime: l.mtime.toISOString(),
          realPath: real,
        };
        if (type === 'symlink') output.target = t === undefined ? null : { type: entryType(t), size: t.size };
        return { kind: 'completed', output, verified: 'NotApplicable' };
      } finally {
        await dir.close();
      }
    },
  });
}
