/**
 * `fs.delete`: removes a file, a symlink (the link itself, never its target) or a directory
 * (non-empty only with `recursive`), verified by absence (lstat → ENOENT). Naturally idempotent:
 * deleting an already-absent path completes with `existed: false`, Verified.
 */
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { realpath, rm, rmdir, unlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { AivyxError } from '../../core/errors.js';
import { fsDeleteTool } from '../../core/tools/fs-delete.js';
import {
  anchorDirectory,
  assertReachable,
  confinedScope,
  containsProtectedPath,
  dataDirScope,
  lstatOrAbsent,
  NO_PROTECTED_PATHS,
  type AnchoredDirectory,
  type ProtectedPaths,
} from './confinement.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** What a path is, as lstat sees it (a symlink is a symlink, not its target). */
export type FsEntryType = 'file' | 'directory' | 'symlink' | 'other';

/** Output of `fs.delete`. `path` is the real location removed (parents' symlinks resolved). */
export interface FsDeleteOutput {
  path: string;
  existed: boolean;
  type?: FsEntryType;
}

/** Options of `createFsDeleteTool`. */
export interface FsDeleteOptions {
  /** The home directory that may never be deleted itself (default `os.homedir()`). */
  home?: string;
  /** Paths no call may delete, nor any directory holding them (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
  /** Test hook: runs after the target is resolved and checked, just before its directory is opened. */
  beforeOpen?: (target: string) => Promise<void>;
}

const toolError = toolErrorFor('fs.delete');

function isCode(e: unknown, code: string): boolean {
  return (e as NodeJS.ErrnoException | undefined)?.code === code;
}

/** Names what lstat saw. */
export function entryType(s: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): FsEntryType {
  return s.isSymbolicLink() ? 'symlink' : s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other';
}

/**
 * Where `path` really lives WITHOUT following its last component: the realpath of the nearest
 * existing ancestor plus the remaining segments. A symlink in a parent directory is resolved (an
 * escape through it is visible to the scope re-check); a symlink as the last component is the link.
 */
export async function resolveEntry(path: string, tool: string): Promise<string> {
  if (path === '/') return '/';
  const missing: string[] = [basename(path)];
  let dir = dirname(path);
  for (;;) {
    try {
      const real = await realpath(dir);
      return join(real, ...missing.reverse());
    } catch (e) {
      if ((!isCode(e, 'ENOENT') && !isCode(e, 'ENOTDIR')) || dir === '/') {
        throw new AivyxError('Tool', `${tool}: ${dir}: ${(e as Error).message}`, { detail: { tool }, cause: e });
      }
    }
    missing.push(basename(dir));
    dir = dirname(dir);
  }
}

function entryError(e: unknown, path: string): AivyxError {
  if (e instanceof AivyxError) return e;
  return toolError(`${path}: ${(e as Error).message}`, { cause: e });
}

/** Creates the `fs.delete` implementation. */
export function createFsDeleteTool(options: FsDeleteOptions = {}): ToolImplementation {
  const homeSetting = options.home ?? homedir();
  const paths = options.protectedPaths ?? NO_PROTECTED_PATHS;
  return implementTool(fsDeleteTool, {
    async resolveScope(input) {
      const target = await resolveEntry(input.path, 'fs.delete');
      // Deleting a directory that holds the data directory deletes the data directory too.
      return containsProtectedPath(target, paths) ? dataDirScope(target) : confinedScope('fs.delete', target, paths);
    },
    async run(req, ctx) {
      ctx.signal.throwIfAborted();
      const target = await resolveEntry(req.path, 'fs.delete');
      const home = await realpath(homeSetting).catch(() => homeSetting);
      if (target === '/' || target === home)
        throw toolError(`refusing to delete ${target === '/' ? '"/"' : `the home directory ${target}`}`, {
          hint: 'delete the entries inside it instead',
        });
      if (containsProtectedPath(target, paths))
        throw new AivyxError('CapabilityDenied', `fs.delete: ${target} holds aivyx's data directory`, {
          hint: 'delete the entries beside it instead',
          detail: { tool: 'fs.delete', scope: dataDirScope(target) },
        });
      assertReachable('fs.delete', 'fs.delete', target, ctx.held, paths);
      await options.beforeOpen?.(target);
      // Everything below goes through the parent directory's descriptor: a swapped-in link cannot redirect it.
      let dir: AnchoredDirectory;
      try {
        dir = await anchorDirectory('fs.delete', dirname(target));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR')
          return { kind: 'completed', output: { path: target, existed: false } satisfies FsDeleteOutput, verified: 'Verified' };
        throw entryError(e, dirname(target));
      }
      try {
        const entry = dir.entry(basename(target));
        const before = await lstatOrAbsent(entry).catch((e: unknown) => Promise.reject(entryError(e, target)));
        if (before === undefined)
          return { kind: 'completed', output: { path: target, existed: false } satisfies FsDeleteOutput, verified: 'Verified' };
        const type = entryType(before);
        try {
          if (type === 'directory') {
            if (req.recursive) await rm(entry, { recursive: true, force: false });
            else await rmdir(entry);
          } else {
            await unlink(entry);
          }
        } catch (e) {
          if (isCode(e, 'ENOENT')) {
            // Gone meanwhile (a concurrent delete): the effect is in place.
          } else if (isCode(e, 'ENOTEMPTY') || isCode(e, 'EEXIST')) {
            throw toolError(`${target} is a non-empty directory`, {
              cause: e,
              hint: 'pass recursive:true to delete it and everything under it',
            });
          } else if (isCode(e, 'EACCES') || isCode(e, 'EPERM')) {
            throw toolError(`${target}: permission denied`, { cause: e });
          } else {
            throw toolError(`${target}: ${(e as Error).message}`, { cause: e });
          }
        }
        const after = await lstatOrAbsent(entry).catch(() => before);
        return {
          kind: 'completed',
          output: { path: target, existed: true, type } satisfies FsDeleteOutput,
          verified: after === undefined ? 'Verified' : 'Unverified',
        };
      } finally {
        await dir.close();
      }
    },
  });
}
