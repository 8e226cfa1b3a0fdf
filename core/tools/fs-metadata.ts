/** `fs.metadata`: type, size, mode, mtime and real path of a path, without reading it. */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { absolutePathField } from './fields.js';

export const fsMetadataTool = defineTool({
  id: 'fs.metadata',
  description: 'Describe a path without reading it: {exists, type, size, mode, mtime, realPath} (a symlink itself, lstat).',
  input: () => z.strictObject({ path: absolutePathField('path', 'Absolute path.') }),
  scope: { base: 'fs.metadata', qualifier: (i) => i.path },
  idempotency: 'natural',
  // Names and sizes only; a file name can still be chosen by whoever wrote the directory.
  provenance: { output: 'depends', effect: false },
});

/** Validated input of `fs.metadata`; `path` is already lexically normalized. */
export type FsMetadataInput = ReturnType<typeof fsMetadataTool.parse>;
export const parseFsMetadataInput = fsMetadataTool.parse;
