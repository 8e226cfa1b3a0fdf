/**
 * Attachments (seed D3 `StreamEvent::Attachment`): a file a turn hands to the person who asked. The
 * bytes stay sealed in the channel store (infra/attachments.ts); workflows, stream events and tool
 * results carry only this handle. The type is read from the content, never from the name, and only a
 * small set of types is ever named: what a channel shows inline is decided from that set alone.
 * Pure and workflow-safe.
 */

/** The types an attachment can be: the seed's "small, finite, auditable set". */
export const ATTACHMENT_MIMES = [
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
  'text/plain; charset=utf-8',
  'application/octet-stream',
] as const;

/** One of {@link ATTACHMENT_MIMES}. */
export type AttachmentMime = (typeof ATTACHMENT_MIMES)[number];

/** What travels instead of the bytes: enough to show, offer and fetch the file. */
export interface AttachmentRef {
  /** Random (128 bits), but never a capability on its own: fetching also needs the owning session. */
  id: string;
  /** Sanitised file name: no path, no control characters, an extension that matches `mime`. */
  name: string;
  mime: AttachmentMime;
  size: number;
}

/** Default ceiling of one attachment (`AIVYX_ATTACHMENT_MAX_BYTES`): below Telegram's photo limit (10 MB) and most mail servers'. */
export const ATTACHMENT_DEFAULT_MAX_BYTES = 5 * 1024 * 1024;

/** Images a channel may show inline (a raster format no browser runs as a document). */
export function isInlineImage(mime: string): boolean {
  return mime === 'image/png' || mime === 'image/jpeg' || mime === 'image/gif' || mime === 'image/webp';
}

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0): boolean => sig.every((v, i) => b[at + i] === v);
const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

/**
 * The type of `bytes`, from their magic numbers; valid UTF-8 without control characters (other
 * than tab, newlines, form feed) is text. HTML and SVG are text: nothing here names an active type.
 */
export function detectAttachmentMime(bytes: Uint8Array): AttachmentMime {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(bytes, ascii('%PDF-'))) return 'application/pdf';
  return isPlainText(bytes) ? 'text/plain; charset=utf-8' : 'application/octet-stream';
}

function isPlainText(bytes: Uint8Array): boolean {
  for (const b of bytes) if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** The extension a type's files get; text keeps a harmless one of its own. */
const EXTENSION: Record<AttachmentMime, string | undefined> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  'text/plain; charset=utf-8': undefined,
  'application/octet-stream': undefined,
};
const SAME_AS: Record<string, string> = { jpeg: 'jpg' };
/** Extensions a desktop opens as something that runs (a page, a script): a file of ours never ends so. */
const ACTIVE = new Set(['html', 'htm', 'xhtml', 'shtml', 'svg', 'svgz', 'xml', 'xsl', 'js', 'mjs', 'hta', 'url', 'desktop', 'lnk']);
const MAX_NAME = 100;

/**
 * A name safe to show and to save: the last path segment only, letters, digits and `._-()+ ` kept,
 * everything else `_`; no leading dot; at most 100 characters; an extension that fits `mime`
 * (`photo.html` holding a PNG is `photo.html.png`; text named `.html` or `.svg` gets `.txt`).
 */
export function sanitizeAttachmentName(raw: string, mime: AttachmentMime): string {
  const last = raw.split(/[/\\]/).pop() ?? '';
  let name = last
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}._\-()+ ]/gu, '_')
    .replace(/^[.\s]+/, '')
    .trim();
  if (name === '' || /^_*$/.test(name)) name = 'attachment';
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  const want = EXTENSION[mime];
  let suffix = '';
  if (want !== undefined && (SAME_AS[ext] ?? ext) !== want) suffix = `.${want}`;
  else if (want === undefined && ACTIVE.has(ext)) suffix = '.txt';
  return name.slice(0, MAX_NAME - suffix.length) + suffix;
}
