/**
 * `fs.delete` and `fs.metadata` as the core knows them: input validation, model-facing schemas and
 * the scope each call needs. Pure and deterministic (workflow-safe, no Node imports): the workflow
 * checks these lexical scopes; the activity re-derives them over real (symlink-resolved) paths.
 */
import type { ToolDescriptor } from '../tools.js';
import { absolutePath, asRecord, invalid } from './tool-input.js';

/** Validated input of `fs.delete`; `path` is already lexically normalized and never `/`. */
export interface FsDeleteInput {
  path: string;
  recursive: boolean;
}

/** Validated input of `fs.metadata`; `path` is already lexically normalized. */
export interface FsMetadataInput {
  path: string;
}

/** Validates and normalizes an `fs.delete` input; throws AivyxError(InvalidScope). */
export function parseFsDeleteInput(input: unknown): FsDeleteInput {
  const rec = asRecord('fs.delete', input, ['path', 'recursive']);
  const path = absolutePath('fs.delete', 'path', rec.path);
  if (path === '/') throw invalid('fs.delete', 'refusing to delete "/"');
  if (rec.recursive !== undefined && typeof rec.recursive !== 'boolean') throw invalid('fs.delete', '"recursive" must be true or false');
  return { path, recursive: rec.recursive === true };
}

/** Validates and normalizes an `fs.metadata` input; throws AivyxError(InvalidScope). */
export function parseFsMetadataInput(input: unknown): FsMetadataInput {
  const rec = asRecord('fs.metadata', input, ['path']);
  return { path: absolutePath('fs.metadata', 'path', rec.path) };
}

/** `fs.delete`: remove a file, a symlink (not its target) or a directory (non-empty only with `recursive`). */
export const fsDeleteTool: ToolDescriptor = {
  id: 'fs.delete',
  description:
    'Delete a file, a symlink (the link itself, not its target) or a directory; a non-empty directory only with recursive:true. Verified by checking the path is gone. Deleting a path that is already absent succeeds with existed:false. Returns {path, existed, type}.',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Absolute path to delete.' },
      recursive: { type: 'boolean', default: false, description: 'Delete a directory and everything under it.' },
    },
    required: ['path'],
    additionalProperties: false,
  },
  requiredScope: (input) => `fs.delete:${parseFsDeleteInput(input).path}`,
  // Deleting what is already gone changes nothing.
  idempotency: 'natural',
};

/** `fs.metadata`: type, size, mode, mtime and real path of a path, without reading it. */
export const fsMetadataTool: ToolDescriptor = {
  id: 'fs.metadata',
  description:
    'Describe a path without reading it: {path, exists, type (file|directory|symlink|other), size, mode (octal), mtime (ISO-8601), realPath}. A symlink is described itself (lstat) and realPath names its target.',
  inputSchema: {
    type: 'object',
    properties: { path: { type: 'string', description: 'Absolute path.' } },
    required: ['path'],
    additionalProperties: false,
  },
  requiredScope: (input) => `fs.metadata:${parseFsMetadataInput(input).path}`,
  idempotency: 'natural',
};

/** The extra filesystem tools, in the order the model is shown them. */
export const FS_EXTRA_TOOLS: readonly ToolDescriptor[] = Object.freeze([fsDeleteTool, fsMetadataTool]);
