/** `fs.write`: atomically replace (or create) a file with the given text. */
import { z } from 'zod';
import { defineTool, fieldError } from './define-tool.js';
import { absolutePathField, says } from './fields.js';

export const fsWriteTool = defineTool({
  id: 'fs.write',
  description:
    'Write text to a file atomically (temp file + rename) and verify it by reading it back. mode "create" refuses to replace a file with different content.',
  input: () =>
    z.strictObject({
      path: absolutePathField('path', 'Absolute path of the file.'),
      content: z.string({ error: says('"content" must be a string') }).describe('The complete new content (UTF-8).'),
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
