/**
 * `fs.attach`: reads a file (over its real path, checked like `fs.read`: the turn's grants and the
 * data-directory rule apply to the descriptor actually opened), within the attachment limit, reads
 * its type from its content, and stores it sealed for the conversation that asked. The model gets
 * the handle; the channel sends the file with the reply (docs/ATTACHMENTS.md).
 */
import { basename, dirname } from 'node:path';
import { realpath } from 'node:fs/promises';
import { ATTACHMENT_DEFAULT_MAX_BYTES, detectAttachmentMime, sanitizeAttachmentName, type AttachmentRef } from '../../core/attachments.js';
import { AivyxError } from '../../core/errors.js';
import { fsAttachTool } from '../../core/tools/fs-attach.js';
import { toolErrorFor } from '../../core/tools/tool-error.js';
import type { AttachmentSink } from './attachment-port.js';
import { assertReachable, confinedScope, NO_PROTECTED_PATHS, openChecked, type ProtectedPaths } from './confinement.js';
import { ioMessage, readUpTo } from './fs-read.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Output of `fs.attach`: the handle the reply carries. */
export interface FsAttachOutput {
  attachment: AttachmentRef;
}

/** Ports and limits of `fs.attach`. */
export interface FsAttachDeps {
  store: AttachmentSink;
  /** The largest file attached (`AIVYX_ATTACHMENT_MAX_BYTES`). */
  maxBytes?: number;
  protectedPaths?: ProtectedPaths;
}

const fail = toolErrorFor('fs.attach');

async function realFile(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (e) {
    throw fail(ioMessage(e, path), { cause: e });
  }
}

/** Creates the `fs.attach` implementation (storing is idempotent per call: a retry gets the same handle). */
export function createFsAttachTool(deps: FsAttachDeps): ToolImplementation {
  const limit = deps.maxBytes ?? ATTACHMENT_DEFAULT_MAX_BYTES;
  const paths = deps.protectedPaths ?? NO_PROTECTED_PATHS;
  return implementTool(fsAttachTool, {
    async resolveScope({ path }) {
      return confinedScope('fs.read', await realFile(path), paths);
    },
    async run(req, ctx) {
      const path = await realFile(req.path);
      assertReachable('fs.attach', 'fs.read', path, ctx.held, paths);
      if (!ctx.channel) throw fail('this turn has no conversation to attach a file to');
      let handle;
      try {
        handle = await openChecked('fs.attach', path);
      } catch (e) {
        if (e instanceof AivyxError) throw e;
        throw fail(ioMessage(e, path), { cause: e });
      }
      let bytes: Uint8Array;
      try {
        if (!(await handle.stat()).isFile()) throw fail(`not a regular file: ${path}`);
        const { buf, filled } = await readUpTo(handle, limit + 1, ctx.signal);
        if (filled > limit)
          throw fail(`${basename(path)} is larger than the attachment limit of ${limit} bytes: nothing was attached`, {
            hint: 'send a smaller file, or raise AIVYX_ATTACHMENT_MAX_BYTES',
            detail: { limit },
          });
        bytes = buf.slice(0, filled);
      } catch (e) {
        if (e instanceof AivyxError || ctx.signal.aborted) throw e;
        throw fail(ioMessage(e, path), { cause: e });
      } finally {
        await handle.close();
      }
      const mime = detectAttachmentMime(bytes);
      const name = sanitizeAttachmentName(basename(path) || basename(dirname(path)), mime);
      const attachment = await deps.store.save(
        { channel: ctx.channel.name, sessionId: ctx.channel.sessionId, turnId: ctx.turnId },
        { name, mime, size: bytes.length },
        bytes,
        ctx.idemKey,
      );
      const output: FsAttachOutput = { attachment };
      return { kind: 'completed', output, verified: 'NotApplicable', attachment };
    },
  });
}
