/** `fs.delete`: remove a file, a symlink (not its target) or a directory (non-empty only with `recursive`). */
import { z } from 'zod';
import { defineTool, fieldError } from './define-tool.js';
import { absolutePathField, booleanField } from './fields.js';

export const fsDeleteTool = defineTool({
  id: 'fs.delete',
  description:
    'Delete a file, a symlink (the link itself, not its target) or a directory; a non-empty directory only with recursive:true. Verified by checking the path is gone. Deleting a path that is already absent succeeds with existed:false. Returns {path, existed, type}.',
  input: () =>
    z.strictObject({
      path: absolutePathField('path', 'Absolute path to delete.'),
      recursive: booleanField('recursive', 'Delete a directory and everything under it.').default(false),
    }),
  canonical: (i) => {
    if (i.path === '/') throw fieldError('refusing to delete "/"');
    return i;
  },
  scope: { base: 'fs.delete', qualifier: (i) => i.path },
  // Deleting what is already gone changes nothing.
  idempotency: 'natural',
  confirmFirst: true,
  provenance: { output: 'trusted', effect: true },
});

/** Validated input of `fs.delete`; `path` is already lexically normalized and never `/`. */
export type FsDeleteInput = ReturnType<typeof fsDeleteTool.parse>;
export const parseFsDeleteInput = fsDeleteTool.parse;
