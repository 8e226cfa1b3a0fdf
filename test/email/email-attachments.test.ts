/**
 * Attachments by mail (`fs.attach`): the reply to a verified sender carries the file as a MIME
 * attachment, its type read from the content and its name sanitised (no markup, no active
 * extension). Dovecot, the SMTP server, a real worker, PostgreSQL.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapturedMail } from '../support/mail-servers.js';
import { dovecotAvailable } from '../support/mail-servers.js';
import { dkimKey, startMailHarness, type MailHarness } from '../support/mail-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-email-files-'));
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
writeFileSync(join(dir, 'report<img src=x onerror=alert(1)>.svg'), PDF);
const ALICE = 'alice@example.com';

let h: MailHarness;

beforeAll(async () => {
  h = await startMailHarness({
    script: {
      rules: [
        {
          match: 'report',
          steps: [
            { call: [{ tool: 'fs.attach', input: { path: join(dir, 'report<img src=x onerror=alert(1)>.svg') } }] },
            { say: 'attached', sayOnFailure: 'could not: {{results}}' },
          ],
        },
        { steps: [{ say: 'ok' }] },
      ],
    },
    allowlist: [ALICE],
    agent: { capabilities: ['fs.read', 'llm.call'], confirmFirst: [], tierPolicy: { semiTrusted: { 'fs.read': [`${dir}/**`] } } },
  });
  h.keys.set('example.com', dkimKey('example.com', h.dns));
  h.dns.set('example.com TXT', [['v=spf1 ip4:192.0.2.10 -all']]);
  h.dns.set('_dmarc.example.com TXT', [['v=DMARC1; p=reject']]);
}, 120_000);
afterAll(async () => h?.stop());

const describeMail = dovecotAvailable() || process.env.CI ? describe : describe.skip;

describeMail('attachments by mail', () => {
  it('attaches the file to the reply, as the PDF its content says, under a sanitised name', async () => {
    await h.startChannel();
    const m = `files.${Date.now()}@example.com`;
    await h.sendAs({ from: ALICE, subject: 'the report', text: 'send me the report', messageId: m });
    const repliesTo = (): CapturedMail[] => h.smtp.outbound().filter((r) => r.parsed.inReplyTo === `<${m}>`);
    await h.smtp.waitFor(() => repliesTo().length > 0, 45_000, `a reply to ${m}`);
    const reply = repliesTo()[0]!;
    expect(reply.parsed.text).toMatch(/attached/);
    expect(reply.parsed.attachments).toHaveLength(1);
    const [file] = reply.parsed.attachments;
    expect(file!.contentType).toBe('application/pdf');
    expect(file!.contentDisposition).toBe('attachment');
    expect(file!.filename).toBe('report_img src_x onerror_alert(1)_.svg.pdf');
    expect(Buffer.compare(file!.content, PDF)).toBe(0);
  }, 120_000);
});
