/** `fs.write`: atomically replace (or create) a file with the given text. */
import { z } from 'zod';
import { defineTool, fieldError } from './define-tool.js';
import { absolutePathField, says } from './fields.js';

export const fsWriteTool = defineTool({
  id: 'fs.write',
  description: 'Write a whole text file atomically. mode "create" refuses to replace a different file.',
  input: () =>
    z.strictObject({
      path: absolutePathField('path', 'Absolute path.'),
      content: z.string({ error: says('"content" must be a string') }).describe('The whole new content.'),
      mode: z.enum(['overwrite', 'create'], { error: says('"mode" must be "overwrite" or "create"') }).default('overwrite'),
    }),
  canonical: (i) => {
    if (i.path === '/') throw fieldError('cannot write to "/"');
    return i;
  },
  scope: { base: 'fs.write', qualifier: (i) => i.path },
  // Same content twice is the same effect; 'create' accepts identical existing content.
  idempotency: 'natural',
  provenance: { output: 'trusted', effect: true, contentFields: ['content', 'mode'], launders: true },
});

/** Validated input of `fs.write`; `path` is already lexically normalized. */
export type FsWriteInput = ReturnType<typeof fsWriteTool.parse>;
export const parseFsWriteInput = fsWriteTool.parse;
