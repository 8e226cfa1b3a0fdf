/**
 * `fs.metadata`: lstat plus realpath of one path. Read-only (naturally idempotent), NotApplicable.
 * The scope is re-derived over the real path: a symlink in a granted tree that points outside it
 * needs the grant for its target, because realPath reveals the target.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import { AivyxError } from '../../core/errors.js';
import { fsMetadataTool, parseFsMetadataInput } from '../../core/tools/fs-extra-tools.js';
import { entryType, resolveEntry, type FsEntryType } from './fs-delete.js';
import type { ToolImplementation } from './tool-implementation.js';

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

function toolError(message: string, cause?: unknown): AivyxError {
  return new AivyxError('Tool', `fs.metadata: ${message}`, { detail: { tool: 'fs.metadata' }, ...(cause === undefined ? {} : { cause }) });
}

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
export function createFsMetadataTool(): ToolImplementation {
  return {
    descriptor: fsMetadataTool,
    async resolveScope(input) {
      const { path } = parseFsMetadataInput(input);
      return `fs.metadata:${(await realOrEntry(path)).real}`;
    },
    async run(input, ctx) {
      const { path } = parseFsMetadataInput(input);
      ctx.signal.throwIfAborted();
      const { real, resolved } = await realOrEntry(path);
      let l;
      try {
        l = await lstat(path);
      } catch (e) {
        if (isCode(e, 'ENOENT', 'ENOTDIR')) return { kind: 'completed', output: { path, exists: false } satisfies FsMetadataOutput, verified: 'NotApplicable' };
        throw toolError(`${path}: ${(e as Error).message}`, e);
      }
      const type = entryType(l);
      const output: FsMetadataOutput = {
        path,
        exists: true,
        type,
        size: l.size,
        mode: (l.mode & 0o7777).toString(8),
        mtime: l.mtime.toISOString(),
        realPath: real,
      };
      if (type === 'symlink') {
        const t = resolved ? await stat(path).catch(() => undefined) : undefined;
        output.target = t === undefined ? null : { type: entryType(t), size: t.size };
      }
      return { kind: 'completed', output, verified: 'NotApplicable' };
    },
  };
}
