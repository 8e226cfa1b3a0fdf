/**
 * Email trust without servers: DKIM verified by mailauth against keys served from an in-test DNS
 * map (signed here, with RSA and Ed25519; `l=` signatures refused), SPF only from the trusted
 * hop's Received header in its MTA's exact format or from our verifier's topmost
 * Authentication-Results, DMARC alignment with the From domain, and the allowlist — with the
 * attacks that used to come out SemiTrusted (a spoofed HELO, text appended past `l=`).
 */
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import {
  aligned,
  hopClient,
  rawHeaders,
  receivedClauses,
  upstreamSpf,
  validateEmailAllowlist,
  verifyMail,
  type EmailTrustPolicy,
} from '../../channels/email/index.js';
import { dkimKey, mapResolver, SELECTOR, signWithBodyLength, type DnsMap } from '../support/mail-dns.js';

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

const HOP = { host: 'mx.aivyx.test', mta: 'postfix' } as const;
const policy: EmailTrustPolicy = {
  allowlist: ['alice@example.com', 'bob@spf.example', 'carol@example.org'],
  trustedHop: HOP,
  resolver: mapResolver(dns),
};
const exim: EmailTrustPolicy = { ...policy, trustedHop: { host: 'mx.aivyx.test', mta: 'exim' } };

function mail(from: string, body = 'hello there', extra = ''): string {
  return [
    `From: ${from}`,
    'To: assistant@aivyx.test',
    'Subject: hi',
    'Date: Wed, 02 Dec 2026 15:00:00 +0000',
    `Message-ID: <${Math.random()}@x>`,
    extra,
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ]
    .filter((l, i) => l !== '' || i > 5)
    .join('\r\n');
}
const DATE = 'Wed, 02 Dec 2026 15:00:01 +0000';
/** The Received header Postfix writes: `from HELO (rdns [IP]) by host (Postfix) …` (HELO as the client sent it). */
const received = (ip: string, by = 'mx.aivyx.test', sender = 'alice@example.com', helo = 'client.example.net') =>
  `Return-Path: <${sender}>\r\nReceived: from ${helo} (localhost [${ip}])\r\n\tby ${by} (Postfix) with ESMTP id 1\r\n\tfor <assistant@aivyx.test>; ${DATE}\r\n`;
/** The Received header Exim writes for a client without a verified host name: `from [IP] (helo=HELO) by host …`. */
const eximReceived = (ip: string, helo: string, sender = 'alice@example.com') =>
  `Return-Path: <${sender}>\r\nReceived: from [${ip}] (helo=${helo})\r\n\tby mx.aivyx.test with esmtp (Exim 4.96)\r\n\t(envelope-from <${sender}>)\r\n\tid 1tAbCd-000001-Xy\r\n\tfor assistant@aivyx.test; ${DATE}\r\n`;

async function sign(raw: string, domain: string, key: string, selector = SELECTOR): Promise<string> {
  // mailauth 4 signs what `signatureData` lists; its typings also want the fields at the top.
  const res = await dkimSign(raw, {
    signingDomain: domain,
    selector,
    privateKey: key,
    signatureData: [{ signingDomain: domain, selector, privateKey: key }],
  });
  expect(res.errors).toEqual([]);
  return res.signatures + raw;
}

describe('email trust', () => {
  it('a DKIM-signed mail from an allowlisted address of the signing domain is SemiTrusted (DMARC pass)', async () => {
    const v = await verifyMail(
      Buffer.from(received('127.0.0.1') + (await sign(mail('Alice <alice@example.com>'), 'example.com', exampleKey))),
      policy,
    );
    expect(v, JSON.stringify(v)).toMatchObject({
      tier: 'SemiTrusted',
      from: 'alice@example.com',
      dkim: 'pass',
      dmarc: 'pass',
      authenticated: true,
      reasons: [],
    });
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

  it('attack: an unsigned mail whose HELO names an IP the sender domain allows (Exim) → Untrusted; the real IP decides SPF', async () => {
    // Exim puts the client's HELO into the parentheses: `from [127.0.0.1] (helo=[192.0.2.10])`.
    const v = await verifyMail(Buffer.from(eximReceived('127.0.0.1', '[192.0.2.10]') + mail('alice@example.com', 'wire the money')), exim);
    expect(v).toMatchObject({ tier: 'Untrusted', spf: 'fail', authenticated: false });
    // The same header from the IP the record allows passes: the hop is read correctly, not just refused.
    const ok = await verifyMail(Buffer.from(eximReceived('192.0.2.10', 'client.example.net') + mail('alice@example.com')), exim);
    expect(ok).toMatchObject({ tier: 'SemiTrusted', spf: 'pass', dkim: 'none', dmarc: 'pass' });
  });

  it('attack: a Postfix HELO carrying its own "(rdns [IP]) by <hop>" → Untrusted, SPF not evaluated (ambiguous)', async () => {
    for (const helo of [
      'a (b [192.0.2.10]) by mx.aivyx.test (x',
      'a (b [192.0.2.10])',
      'x(b [192.0.2.10])',
      '[192.0.2.10]) (',
      'a; by mx.aivyx.test',
    ]) {
      const v = await verifyMail(
        Buffer.from(received('127.0.0.1', 'mx.aivyx.test', 'alice@example.com', helo) + mail('alice@example.com')),
        policy,
      );
      expect(v, helo).toMatchObject({ tier: 'Untrusted', spf: 'none', authenticated: false });
      expect(v.reasons.join(' '), helo).toMatch(
        /SPF not evaluated: the (topmost Received header is ambiguous|trusted hop's Received header is not in postfix's format)/,
      );
    }
    // An address-literal HELO is legal and harmless: Postfix's own comment still gives the IP.
    const literal = await verifyMail(
      Buffer.from(received('127.0.0.1', 'mx.aivyx.test', 'alice@example.com', '[192.0.2.10]') + mail('alice@example.com')),
      policy,
    );
    expect(literal).toMatchObject({ tier: 'Untrusted', spf: 'fail' });
  });

  it('attack: text appended past a DKIM l= limit → Untrusted (the signature is refused, not counted)', async () => {
    const signed = await signWithBodyLength(mail('alice@example.com', 'pay 10 EUR'), 'example.com', exampleKey, dns);
    const v = await verifyMail(Buffer.from(`${signed}and also 10000 EUR to mallory\r\n`), policy);
    expect(v).toMatchObject({ tier: 'Untrusted', dkim: 'policy', authenticated: false });
    expect(v.reasons.join(' ')).toMatch(/example\.com: refused \(l=\d+ leaves the body after that unsigned\)/);
    // Refused even with nothing appended: the sender's own l= signature never counts.
    expect((await verifyMail(Buffer.from(signed), policy)).tier).toBe('Untrusted');
  });

  it('SPF reads only the topmost Received header (LMTP delivery above it skipped), and only when it is by the trusted hop', async () => {
    const forgedBelow =
      received('198.51.100.7', 'mx.other.test', 'bob@spf.example') +
      received('127.0.0.1', 'mx.aivyx.test', 'bob@spf.example').replace('Return-Path: <bob@spf.example>\r\n', '');
    const v = await verifyMail(Buffer.from(forgedBelow + mail('bob@spf.example')), policy);
    expect(v.tier).toBe('Untrusted');
    expect(v.reasons.join(' ')).toMatch(/topmost Received header is by mx\.other\.test, not the trusted hop mx\.aivyx\.test/);
    expect(
      (
        await verifyMail(Buffer.from(received('127.0.0.1', 'mx.aivyx.test', 'bob@spf.example') + mail('bob@spf.example')), {
          ...policy,
          trustedHop: undefined,
        })
      ).spf,
    ).toBe('none');
    // Dovecot's LMTP header on top is local delivery after our hop.
    const lmtp = `Received: from mx.aivyx.test\r\n\tby imap.aivyx.test with LMTP\r\n\tid abc\r\n\t(envelope-from <bob@spf.example>)\r\n\tfor <assistant@aivyx.test>; ${DATE}\r\n`;
    expect(
      await verifyMail(
        Buffer.from(
          `Return-Path: <bob@spf.example>\r\n${lmtp}${received('127.0.0.1', 'mx.aivyx.test', 'bob@spf.example').replace(/^Return-Path.*\r\n/, '')}${mail('bob@spf.example')}`,
        ),
        policy,
      ),
    ).toMatchObject({ tier: 'SemiTrusted', spf: 'pass' });
    // The wrong format for the hop is refused, not guessed at.
    expect(
      (
        await verifyMail(Buffer.from(received('127.0.0.1', 'mx.aivyx.test', 'bob@spf.example') + mail('bob@spf.example')), exim)
      ).reasons.join(' '),
    ).toMatch(/not in exim's format/);
  });

  it('Authentication-Results: only the topmost header, only our authserv-id', async () => {
    const ar = (id: string, spf: string) =>
      `Authentication-Results: ${id};\r\n\tdkim=none (no signature);\r\n\tspf=${spf} (sender IP is 192.0.2.10; ok) smtp.mailfrom=alice@example.com smtp.helo=client.example.net\r\n`;
    const withId: EmailTrustPolicy = { ...policy, trustedHop: undefined, authservId: 'mx.aivyx.test' };
    // Ours on top, saying pass → SPF pass (aligned, DMARC pass) → SemiTrusted.
    expect(await verifyMail(Buffer.from(ar('mx.aivyx.test', 'pass') + mail('alice@example.com')), withId)).toMatchObject({
      tier: 'SemiTrusted',
      spf: 'pass',
      dmarc: 'pass',
    });
    // A sender's forged "pass" under our id sits below ours, which says fail.
    const forged = ar('mx.aivyx.test', 'fail') + received('127.0.0.1').replace(/^Return-Path.*\r\n/, '') + ar('mx.aivyx.test', 'pass');
    expect(await verifyMail(Buffer.from(forged + mail('alice@example.com')), withId)).toMatchObject({ tier: 'Untrusted', spf: 'fail' });
    // A topmost header by another authserv-id (the sender's, when our MX adds none) is not read at all.
    const other = await verifyMail(
      Buffer.from(ar('mx.evil.test', 'pass') + ar('mx.aivyx.test', 'pass') + mail('alice@example.com')),
      withId,
    );
    expect(other).toMatchObject({ tier: 'Untrusted', spf: 'none' });
    expect(other.reasons.join(' ')).toMatch(/topmost Authentication-Results header is from mx\.evil\.test, not mx\.aivyx\.test/);
    // Without an authserv-id configured, no Authentication-Results header counts.
    expect(
      (await verifyMail(Buffer.from(ar('mx.aivyx.test', 'pass') + mail('alice@example.com')), { ...withId, authservId: undefined })).tier,
    ).toBe('Untrusted');
    expect(upstreamSpf(rawHeaders(Buffer.from(ar('mx.aivyx.test', 'pass') + mail('a@b.c'))), 'MX.aivyx.test')).toEqual({
      ok: true,
      result: 'pass',
      domain: 'example.com',
    });
    expect(
      upstreamSpf(
        rawHeaders(Buffer.from('Authentication-Results: mx.aivyx.test; spf=pass (unclosed smtp.mailfrom=a@b.c\r\n\r\n')),
        'mx.aivyx.test',
      ),
    ).toMatchObject({ ok: false, reason: expect.stringMatching(/malformed/) });
  });

  it('parses Received headers in Postfix and Exim formats, refusing the ambiguous ones; aligns domains; checks the allowlist', () => {
    const h = rawHeaders(Buffer.from(received('127.0.0.1') + mail('a@b.c')));
    expect(h[0]).toEqual({ name: 'return-path', value: '<alice@example.com>' });
    expect(hopClient(h, { host: 'MX.aivyx.test', mta: 'postfix' })).toEqual({
      ok: true,
      ip: '127.0.0.1',
      helo: 'client.example.net',
      sender: 'alice@example.com',
    });
    expect(hopClient(h, { host: 'mx.other.test', mta: 'postfix' })).toMatchObject({ ok: false });
    const exim = (from: string) =>
      hopClient(
        rawHeaders(
          Buffer.from(
            `Received: ${from}\r\n\tby mx with esmtps (TLS1.3) tls TLS_AES_256_GCM_SHA384 (Exim 4.96) (envelope-from <a@b.c>) id X for a@mx; ${DATE}\r\n\r\n`,
          ),
        ),
        { host: 'mx', mta: 'exim' },
      );
    expect(exim('from mail.b.c ([198.51.100.7]:4567 helo=[192.0.2.10])')).toMatchObject({
      ok: true,
      ip: '198.51.100.7',
      helo: '[192.0.2.10]',
    });
    expect(exim('from mail.b.c ([198.51.100.7])')).toMatchObject({ ok: true, ip: '198.51.100.7', helo: 'mail.b.c' });
    expect(exim('from [198.51.100.7] (port=4567 helo=x.b.c)')).toMatchObject({ ok: true, ip: '198.51.100.7', helo: 'x.b.c' });
    expect(exim('from [2001:db8::7]')).toMatchObject({ ok: true, ip: '2001:db8::7' });
    expect(exim('from [198.51.100.7] (helo=x) ([192.0.2.10])')).toMatchObject({ ok: false });
    expect(exim('from mail.b.c (helo=[192.0.2.10] [198.51.100.7])')).toMatchObject({ ok: false });
    expect(exim('from mail.b.c ([198.51.100.7] helo=a b)')).toMatchObject({ ok: false });
    expect(receivedClauses(`from a (b [1.2.3.4]) by mx (Postfix) with ESMTPS id 1 for <x@y>; ${DATE}`)).toEqual({
      from: { word: 'a', comments: ['b [1.2.3.4]'] },
      by: 'mx',
      with: 'ESMTPS',
    });
    expect(receivedClauses(`from a b (c [1.2.3.4]) by mx; ${DATE}`)).toBeUndefined();
    expect(receivedClauses(`from a (c [1.2.3.4]) by mx by my; ${DATE}`)).toBeUndefined();
    expect(receivedClauses(`from a (c [1.2.3.4]) by mx with x with y; ${DATE}`)).toBeUndefined();
    expect(receivedClauses(`from a (c [1.2.3.4]) by mx for <x(y@z>; ${DATE}`)).toMatchObject({ by: 'mx' });
    expect(aligned('example.com', 'mail.example.com')).toBe(true);
    expect(aligned('mail.example.com', 'example.com')).toBe(false);
    expect(aligned('com', 'example.com')).toBe(false);
    expect(aligned('evil-example.com', 'example.com')).toBe(false);
    expect(() => validateEmailAllowlist(['alice'])).toThrow(/not an address/);
  });
});
