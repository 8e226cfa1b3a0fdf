/**
 * The files a turn attached (`fs.attach`), saved by `aivyx chat` where the owner finds them:
 * `<AIVYX_HOME>/downloads/` (the data directory is the owner's, 0700; its `downloads` folder is
 * not sealed state, it is where files are handed over). A name is sanitised again here (the CLI
 * trusts no name it is sent: only its last segment, no leading dot), never overwrites a file
 * (`name (1).ext`…), and the path it writes is checked to lie directly in that folder.
 */
import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { ATTACHMENT_MIMES, sanitizeAttachmentName, type AttachmentMime } from '../../core/attachments.js';
import { AivyxError } from '../../core/errors.js';
import type { ListedAttachment } from '../rest/rest-attachments.js';
import { restBytes, type RestTarget } from './rest-client.js';

const MAX_COPIES = 100;

/** Saves each attachment under `dir`; returns the paths written, in order. */
export async function saveAttachments(target: RestTarget, files: readonly ListedAttachment[], dir: string): Promise<string[]> {
  const folder = resolve(dir);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const saved: string[] = [];
  for (const f of files) {
    const bytes = await restBytes(target, `/v1/attachments/${encodeURIComponent(f.id)}?session=${encodeURIComponent(f.session)}`);
    const mime: AttachmentMime = (ATTACHMENT_MIMES as readonly string[]).includes(f.mime) ? f.mime : 'application/octet-stream';
    saved.push(await writeNew(folder, sanitizeAttachmentName(String(f.name), mime), bytes));
  }
  return saved;
}

/** Writes `bytes` to a file named `name` (or `name (n)`) that did not exist in `folder`. */
async function writeNew(folder: string, name: string, bytes: Uint8Array): Promise<string> {
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 0; n < MAX_COPIES; n++) {
    const path = join(folder, n === 0 ? name : `${stem} (${n})${ext}`);
    // The sanitised name has no separator; this holds whatever it became.
    if (dirname(path) !== folder) throw new AivyxError('Channel', `refused to save ${JSON.stringify(name)} outside ${folder}`);
    let handle;
    try {
      handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw e;
    }
    try {
      await handle.writeFile(bytes);
    } finally {
      await handle.close();
    }
    return path;
  }
  throw new AivyxError('Channel', `${MAX_COPIES} files named ${name} already in ${folder}`, { hint: 'tidy the folder up' });
}
