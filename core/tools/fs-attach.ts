/** `fs.attach`: hand a file to the person who asked (an image, a PDF, a text), as an attachment of the reply. */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { absolutePathField } from './fields.js';

export const fsAttachTool = defineTool({
  id: 'fs.attach',
  description:
    'Attach a file to your reply: the person who asked receives it on their channel (an image is shown, other files are offered). ' +
    'At most a few MB. The type is read from the content. Returns {attachment: {id, name, mime, size}}; the file is not shown to you.',
  input: () => z.strictObject({ path: absolutePathField('path', 'Absolute path of the file to attach.') }),
  // Attaching is reading the file for the person who asked: the fs.read grants decide which files, so it grants nothing new.
  scope: { base: 'fs.read', qualifier: (i) => i.path },
  // The same call (activity key) stores the same attachment once (infra/attachments.ts).
  idempotency: 'natural',
  // The model sees a handle and a sanitised name, never the content; but a name is the words of whoever
  // wrote the folder (as for fs.metadata): outside the trusted roots the result is labelled. The file
  // goes only to the turn's own conversation: no effect elsewhere.
  provenance: { output: 'depends', effect: false },
});

/** Validated input of `fs.attach`; `path` is already lexically normalized. */
export type FsAttachInput = ReturnType<typeof fsAttachTool.parse>;
export const parseFsAttachInput = fsAttachTool.parse;
