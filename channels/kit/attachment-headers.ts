/**
 * How a web channel serves an attachment's bytes (REST, the app): the type from the content only
 * (core/attachments.ts), never sniffed, and only raster images inline. Everything else (PDF, text
 * that may well be HTML or SVG, unknown bytes) is a download, under a sandboxing CSP besides.
 */
import { isInlineImage, type AttachmentRef } from '../../core/attachments.js';

/** The response headers for `ref`. */
export function attachmentHeaders(ref: AttachmentRef): Record<string, string> {
  const inline = isInlineImage(ref.mime);
  // RFC 6266/5987: an ASCII fallback and the UTF-8 name (sanitised already: no quotes, no separators).
  const ascii = ref.name.replace(/[^\x20-\x7e]/g, '_');
  return {
    'content-type': ref.mime,
    'content-length': String(ref.size),
    'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(ref.name)}`,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'no-store',
  };
}
