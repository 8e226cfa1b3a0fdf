/**
 * What `/skilledit NAME` reads (channels/telegram/skill-edit-text.ts): the parts to change, one per
 * line, in the shape `/skill NAME` shows them, so the owner can copy a skill on a phone, change a
 * line and send it back. Anything else is refused with the format, never guessed at.
 */
import { describe, expect, it } from 'vitest';
import { parseSkillEdit } from '../../channels/telegram/skill-edit-text.js';

describe('/skilledit text', () => {
  it('reads a copied /skill reply, provenance line and all', () => {
    const copied = [
      'file-receipts v1: File receipts and invoices',
      'When: a receipt arrives',
      '1. read the receipt',
      '2) append it to the month',
      'Tools it expects (it grants none): fs.read, fs.write',
      'Proposed after untrusted content: a file outside the trusted roots',
    ].join('\n');
    expect(parseSkillEdit(copied)).toEqual({
      changes: {
        summary: 'File receipts and invoices',
        whenToUse: 'a receipt arrives',
        steps: ['read the receipt', 'append it to the month'],
        tools: ['fs.read', 'fs.write'],
      },
    });
  });

  it('changes only the parts given; "Tools: none" empties the list', () => {
    expect(parseSkillEdit('\nSummary: one line\n')).toEqual({ changes: { summary: 'one line' } });
    expect(parseSkillEdit('Tools: none')).toEqual({ changes: { tools: [] } });
  });

  it('refuses what it cannot read, and an edit of nothing', () => {
    expect(parseSkillEdit('summary one line')).toEqual({ problem: 'I could not read "summary one line".' });
    expect(parseSkillEdit('  \n ')).toEqual({ problem: 'Nothing to change.' });
  });
});
