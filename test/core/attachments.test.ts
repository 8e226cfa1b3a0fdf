/** Attachment types come from the content, and names are made safe to show and to save (core/attachments.ts). */
import { describe, expect, it } from 'vitest';
import { detectAttachmentMime, isInlineImage, sanitizeAttachmentName } from '../../core/attachments.js';

const bytes = (...parts: Array<string | number[]>) =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'string' ? [...Buffer.from(p, 'utf8')] : p)));

describe('detectAttachmentMime', () => {
  it.each([
    ['png', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'rest'), 'image/png'],
    ['jpeg', bytes([0xff, 0xd8, 0xff, 0xe0]), 'image/jpeg'],
    ['gif', bytes('GIF89a...'), 'image/gif'],
    ['webp', bytes('RIFF', [1, 2, 3, 4], 'WEBPVP8 '), 'image/webp'],
    ['pdf', bytes('%PDF-1.7\n'), 'application/pdf'],
    ['text', bytes('héllo\tworld\r\n'), 'text/plain; charset=utf-8'],
    ['empty', bytes(), 'text/plain; charset=utf-8'],
    ['html is text', bytes('<!doctype html><script>alert(1)</script>'), 'text/plain; charset=utf-8'],
    ['svg is text', bytes('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 'text/plain; charset=utf-8'],
    ['binary', bytes([0, 1, 2, 3]), 'application/octet-stream'],
    ['invalid utf-8', bytes([0xc3, 0x28]), 'application/octet-stream'],
    ['RIFF that is not WebP', bytes('RIFF', [1, 2, 3, 4], 'WAVEfmt '), 'application/octet-stream'],
  ])('%s', (_label, content, mime) => {
    expect(detectAttachmentMime(content)).toBe(mime);
  });

  it('shows only raster images inline', () => {
    expect(['image/png', 'image/jpeg', 'image/gif', 'image/webp'].every(isInlineImage)).toBe(true);
    expect(['image/svg+xml', 'text/html', 'application/pdf', 'text/plain; charset=utf-8'].some(isInlineImage)).toBe(false);
  });
});

describe('sanitizeAttachmentName', () => {
  it.each([
    ['../../x', 'text/plain; charset=utf-8', 'x'],
    ['..\\..\\windows\\x.txt', 'text/plain; charset=utf-8', 'x.txt'],
    ['..', 'text/plain; charset=utf-8', 'attachment'],
    ['.bashrc', 'text/plain; charset=utf-8', 'bashrc'],
    // The last segment after the slash is all that is kept.
    ['<script>alert(1)</script>', 'text/plain; charset=utf-8', 'script_'],
    ['<script>x.txt', 'text/plain; charset=utf-8', '_script_x.txt'],
    ['page.html', 'text/plain; charset=utf-8', 'page.html.txt'],
    ['logo.SVG', 'text/plain; charset=utf-8', 'logo.SVG.txt'],
    ['photo.html', 'image/png', 'photo.html.png'],
    ['photo.jpeg', 'image/jpeg', 'photo.jpeg'],
    ['report', 'application/pdf', 'report.pdf'],
    ['a\u0000b\nc"d.txt', 'text/plain; charset=utf-8', 'a_b_c_d.txt'],
    ['résumé 2026 (final).pdf', 'application/pdf', 'résumé 2026 (final).pdf'],
    ['data.bin', 'application/octet-stream', 'data.bin'],
  ] as const)('%j as %s → %j', (raw, mime, want) => {
    expect(sanitizeAttachmentName(raw, mime)).toBe(want);
  });

  it('keeps names short, and the extension that fits', () => {
    const name = sanitizeAttachmentName(`${'a'.repeat(300)}.html`, 'image/gif');
    expect(name.length).toBe(100);
    expect(name.endsWith('.gif')).toBe(true);
  });
});
