/** `fs.read`: read a UTF-8 text file (up to a byte cap). */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { absolutePathField, positiveIntField } from './fields.js';

export const fsReadTool = defineTool({
  id: 'fs.read',
  description: 'Read a UTF-8 text file (at most 1 MiB). Returns {path, content, bytes, truncated}.',
  input: () =>
    z.strictObject({
      path: absolutePathField('path', 'Absolute path.'),
      maxBytes: positiveIntField('maxBytes', Number.MAX_SAFE_INTEGER, 'Read at most this many bytes.').optional(),
    }),
  scope: { base: 'fs.read', qualifier: (i) => i.path },
  idempotency: 'natural',
  // Inside the trusted roots a file is the owner's; elsewhere anyone may have written it: the run labels it.
  provenance: { output: 'depends', effect: false },
});

/** Validated input of `fs.read`; `path` is already lexically normalized. */
export type FsReadInput = ReturnType<typeof fsReadTool.parse>;
export const parseFsReadInput = fsReadTool.parse;
