/**
 * A reply's files on Matrix: uploaded to the homeserver's media repository and sent as `m.image`
 * (a raster image, shown) or `m.file` (offered) after the reply's text. Into an end-to-end
 * encrypted room the file is encrypted first, as the spec's "Sending encrypted attachments" says
 * (AES-256-CTR under a fresh key, the ciphertext's SHA-256, the key as a JWK in the event's `file`,
 * which the room's encryption then hides): the homeserver only ever holds ciphertext, and plaintext
 * media never goes into an encrypted room.
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import type { LoadedAttachment } from '../../activities/tools/attachment-port.js';
import { isInlineImage } from '../../core/attachments.js';
import type { MatrixClient } from './client.js';

/** The `file` of an encrypted attachment (spec: EncryptedFile), `url` its mxc URI. */
export interface EncryptedFile {
  url: string;
  key: { kty: 'oct'; key_ops: ['encrypt', 'decrypt']; alg: 'A256CTR'; k: string; ext: true };
  iv: string;
  hashes: { sha256: string };
  v: 'v2';
}

const unpadded = (b: Uint8Array) => Buffer.from(b).toString('base64').replace(/=+$/, '');

/** Encrypts `bytes` for an encrypted room: the ciphertext to upload and the `file` to send (without its url). */
export function encryptFile(bytes: Uint8Array): { ciphertext: Buffer; file: Omit<EncryptedFile, 'url'> } {
  const key = randomBytes(32);
  // 64 random bits then a 64-bit block counter starting at zero (the spec's v2, so clients do not overflow it).
  const iv = Buffer.concat([randomBytes(8), Buffer.alloc(8)]);
  const cipher = createCipheriv('aes-256-ctr', key, iv);
  const ciphertext = Buffer.concat([cipher.update(bytes), cipher.final()]);
  return {
    ciphertext,
    file: {
      key: { kty: 'oct', key_ops: ['encrypt', 'decrypt'], alg: 'A256CTR', k: key.toString('base64url'), ext: true },
      iv: unpadded(iv),
      hashes: { sha256: unpadded(createHash('sha256').update(ciphertext).digest()) },
      v: 'v2',
    },
  };
}

/** Uploads `file` (encrypted when `encrypted`) and returns the `m.room.message` content that shows it. */
export async function fileMessage(client: MatrixClient, file: LoadedAttachment, encrypted: boolean): Promise<Record<string, unknown>> {
  const info = { mimetype: file.mime, size: file.size };
  const shown = { msgtype: isInlineImage(file.mime) ? 'm.image' : 'm.file', body: file.name, filename: file.name };
  if (!encrypted) return { ...shown, url: await client.upload(file.bytes, file.mime, file.name), info };
  const { ciphertext, file: secret } = encryptFile(file.bytes);
  // The upload's own type says nothing about the content: it is ciphertext.
  const url = await client.upload(ciphertext, 'application/octet-stream', undefined);
  return { ...shown, file: { url, ...secret }, info };
}
