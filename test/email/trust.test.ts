/**
 * Email trust without servers: DKIM verified by mailauth against keys served from an in-test DNS
 * map (signed here, with RSA and Ed25519), SPF from the trusted receiver's Received header only,
 * DMARC alignment with the From domain, and the allowlist.
 */
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { aligned, rawHeaders, trustedClient, validateEmailAllowlist, verifyMail, type EmailTrustPolicy } from '../../channels/email/index.js';
import { dkimKey, mapResolver, SELECTOR, type DnsMap } from '../support/mail-dns.js';

const dns: DnsMap = new Map();
const exampleKey = dkimKey('example.com', dns);
const evilKey = dkimKey('evil.test', dns);
// Ed25519: the raw 32-byte public key in p=.
const ed = generateKeyPairSync('ed25519');
const edPub = ed.publicKey.export({ type: 'spki', format: 'der' }).subarray(-32).toString('base64');
dns.set(`ed._domainkey.example.org TXT`, [[`v=DKIM1; k=ed25519; p=${edPub}`]]);
const edKey = ed.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
dns.set('example.com TXT', [['v=spf1 ip4:192.0.2.10 -all']]);
dns.set('_dmarc.example.com TXT', [['v=DMARC1; p=reject']]);
dns.set('spf.example TXT', [['v=spf1 ip4:127.0.0.1 -all']]);

const policy: EmailTrustPolicy = { allowlist: ['alice@example.com', 'bob@spf.example', 'carol@example.org'], trustedReceiver: 'mx.aivyx.test', resolver: mapResolver(dns) };

function mail(from: string, body = 'hello there', extra = ''): string {
  return [`From: ${from}`, 'To: assistant@aivyx.test', 'Subject: hi', 'Date: Wed, 02 Dec 2026 15:00:00 +0000', `Message-ID: <${Math.random()}@x>`, extra, 'Content-Type: text/plain; charset=utf-8', '', body, ''].filter((l, i) => l !== '' || i > 5).join('\r\n');
}
const received = (ip: string, by = 'mx.aivyx.test', sender = 'alice@example.com') => `Return-Path: <${sender}>\r\nReceived: from client.example.net (localhost [${ip}])\r\n\tby ${by} with ESMTP id 1; Wed, 02 Dec 2026 15:00:01 +0000\r\n`;

async function sign(raw: string, domain: string, key: string, selector = SELECTOR): Promise<string> {
  // mailauth 4 signs what `signatureData` lists; its typings also want the fields at the top.
  const res = await dkimSign(raw, { signingDomain: domain, selector, privateKey: key, signatureData: [{ signingDomain: domain, selector, privateKey: key }] });
  expect(res.errors).toEqual([]);
  return res.signatures + raw;
}

describe('email trust', () => {
  it('a DKIM-signed mail from an allowlisted address of the signing domain is SemiTrusted (DMARC pass)', async () => {
    const v = await verifyMail(Buffer.from(received('127.0.0.1') + (await sign(mail('Alice <alice@example.com>'), 'example.com', exampleKey))), policy);
    expect(v).toMatchObject({ tier: 'SemiTrusted', from: 'alice@example.com', dkim: 'pass', dmarc: 'pass', authenticated: true, reasons: [] });
  });

  it('Ed25519 signatures verify too (no DMARC record: our relaxed alignment decides)', async () => {
    const v = await verifyMail(Buffer.from(await sign(mail('carol@example.org'), 'example.org', edKey, 'ed')), policy);
    expect(v).toMatchObject({ tier: 'SemiTrusted', dkim: 'pass', dmarc: 'none' });
  });

  it('unsigned → Untrusted (SPF does not authorise the connecting IP)', async () => {
    const v = await verifyMail(Buffer.from(received('127.0.0.1') + mail('alice@example.com')), policy);
    expect(v.tier).toBe('Untrusted');
    expect(v.spf).toBe('fail');
    expect(v.reasons.join(' ')).toMatch(/no DKIM signature/);
  });

  it('a body altered after signing → Untrusted', async () => {
    const signed = await sign(mail('alice@example.com', 'pay 10 EUR'), 'example.com', exampleKey);
    const v = await verifyMail(Buffer.from(signed.replace('pay 10 EUR', 'pay 10000 EUR')), policy);
    expect(v.tier).toBe('Untrusted');
    expect(v.dkim).not.toBe('pass');
  });

  it('a valid signature of another domain (From not aligned) → Untrusted', async () => {
    const v = await verifyMail(Buffer.from(await sign(mail('alice@example.com'), 'evil.test', evilKey)), policy);
    expect(v).toMatchObject({ tier: 'Untrusted', authenticated: false });
    expect(v.reasons.join(' ')).toMatch(/evil\.test: pass/);
  });

  it('a verified but non-allowlisted sender → Untrusted', async () => {
    const v = await verifyMail(Buffer.from(await sign(mail('mallory@example.com'), 'example.com', exampleKey)), policy);
    expect(v).toMatchObject({ tier: 'Untrusted', authenticated: true });
    expect(v.reasons).toEqual(['mallory@example.com is not on the allowlist']);
  });

  it('two From addresses → Untrusted', async () => {
    const v = await verifyMail(Buffer.from(await sign(mail('alice@example.com, bob@spf.example'), 'example.com', exampleKey)), policy);
    expect(v.tier).toBe('Untrusted');
  });

  it('SPF passes from the IP our receiver recorded (aligned Return-Path) → SemiTrusted without DKIM', async () => {
    const v = await verifyMail(Buffer.from(received('127.0.0.1', 'mx.aivyx.test', 'bob@spf.example') + mail('bob@spf.example')), policy);
    expect(v).toMatchObject({ tier: 'SemiTrusted', spf: 'pass', dkim: 'none' });
  });

  it('SPF ignores a Received header not written by the trusted receiver, and any below the top', async () => {
    const forgedBelow = received('198.51.100.7', 'mx.other.test', 'bob@spf.example') + received('127.0.0.1', 'mx.aivyx.test', 'bob@spf.example').replace('Return-Path: <bob@spf.example>\r\n', '');
    expect((await verifyMail(Buffer.from(forgedBelow + mail('bob@spf.example')), policy)).tier).toBe('Untrusted');
    expect((await verifyMail(Buffer.from(received('127.0.0.1', 'mx.aivyx.test', 'bob@spf.example') + mail('bob@spf.example')), { ...policy, trustedReceiver: undefined })).spf).toBe('none');
  });

  it('parses headers and the trusted client; aligns domains; checks the allowlist', () => {
    const h = rawHeaders(Buffer.from(received('127.0.0.1') + mail('a@b.c')));
    expect(h[0]).toEqual({ name: 'return-path', value: '<alice@example.com>' });
    expect(trustedClient(h, 'MX.aivyx.test')).toEqual({ ip: '127.0.0.1', helo: 'client.example.net', sender: 'alice@example.com' });
    expect(trustedClient(h, 'mx.other.test')).toBeUndefined();
    expect(aligned('example.com', 'mail.example.com')).toBe(true);
    expect(aligned('mail.example.com', 'example.com')).toBe(false);
    expect(aligned('com', 'example.com')).toBe(false);
    expect(aligned('evil-example.com', 'example.com')).toBe(false);
    expect(() => validateEmailAllowlist(['alice'])).toThrow(/not an address/);
  });
});
