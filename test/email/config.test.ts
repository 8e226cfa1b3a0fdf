/** Email configuration from AIVYX_EMAIL_*: off when unset, passwords from sealed secrets, refusals with hints. */
import { describe, expect, it } from 'vitest';
import { emailConfigFromEnv, emailOptionsFromConfig } from '../../channels/email/index.js';

const secrets: Record<string, string> = { 'email-password': 's3cret', 'smtp-password': 'other' };
const secret = async (name: string) => secrets[name];
const base = {
  AIVYX_EMAIL_ADDRESS: 'assistant@example.net',
  AIVYX_EMAIL_IMAP_HOST: 'imap.example.net',
  AIVYX_EMAIL_SMTP_HOST: 'smtp.example.net',
  AIVYX_EMAIL_IMAP_PASSWORD_SECRET: 'email-password',
};

describe('emailConfigFromEnv', () => {
  it('is off without AIVYX_EMAIL_ADDRESS', async () => {
    expect(await emailConfigFromEnv({}, secret)).toBeUndefined();
  });

  it('reads defaults: IMAPS 993, submission 587 with STARTTLS required, the IMAP secret for SMTP too', async () => {
    const c = (await emailConfigFromEnv(
      {
        ...base,
        AIVYX_EMAIL_ALLOWLIST: 'Alice@Example.com, bob@example.org',
        AIVYX_EMAIL_TRUSTED_HOP: 'mx.example.net',
        AIVYX_EMAIL_TRUSTED_HOP_MTA: 'Postfix',
        AIVYX_EMAIL_AUTHSERV_ID: 'mx.example.net',
      },
      secret,
    ))!;
    expect(c.imap).toEqual({
      host: 'imap.example.net',
      port: 993,
      secure: true,
      user: 'assistant@example.net',
      password: 's3cret',
      mailbox: 'INBOX',
    });
    expect(c.smtp).toEqual({
      host: 'smtp.example.net',
      port: 587,
      secure: false,
      requireTls: true,
      user: 'assistant@example.net',
      password: 's3cret',
    });
    expect(c.allowlist).toEqual(['alice@example.com', 'bob@example.org']);
    expect(emailOptionsFromConfig(c).trust).toEqual({
      allowlist: ['alice@example.com', 'bob@example.org'],
      trustedHop: { host: 'mx.example.net', mta: 'postfix' },
      authservId: 'mx.example.net',
    });
  });

  it('takes ports, TLS modes, a separate SMTP secret, backlog and the attachment cap', async () => {
    const c = (await emailConfigFromEnv(
      {
        ...base,
        AIVYX_EMAIL_IMAP_PORT: '143',
        AIVYX_EMAIL_IMAP_STARTTLS: 'required',
        AIVYX_EMAIL_SMTP_PORT: '465',
        AIVYX_EMAIL_SMTP_PASSWORD_SECRET: 'smtp-password',
        AIVYX_EMAIL_BACKLOG: 'all',
        AIVYX_EMAIL_MAX_ATTACHMENT_BYTES: '1000',
      },
      secret,
    ))!;
    expect(c.imap).toMatchObject({ port: 143, secure: false, startTls: 'required' });
    expect(c.smtp).toMatchObject({ port: 465, secure: true, requireTls: false, password: 'other' });
    expect(c).toMatchObject({ backlog: 'all', maxAttachmentBytes: 1000 });
  });

  it('refuses a missing host, a missing secret, a bad port and a bad allowlist entry', async () => {
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_IMAP_HOST: '' }, secret)).rejects.toThrow(/AIVYX_EMAIL_IMAP_HOST is required/);
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_IMAP_PASSWORD_SECRET: 'nope' }, secret)).rejects.toThrow(
      /secret "nope" is not set/,
    );
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_IMAP_PASSWORD_SECRET: undefined }, secret)).rejects.toThrow(
      /must name the secret/,
    );
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_SMTP_PORT: '99999' }, secret)).rejects.toThrow(/not a port/);
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_ALLOWLIST: 'alice' }, secret)).rejects.toThrow(/not an address/);
  });

  it('needs the trusted hop MTA (its Received format) and refuses the retired AIVYX_EMAIL_TRUSTED_RECEIVER', async () => {
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_TRUSTED_HOP: 'mx.example.net' }, secret)).rejects.toThrow(
      /AIVYX_EMAIL_TRUSTED_HOP_MTA must be postfix or exim/,
    );
    await expect(
      emailConfigFromEnv({ ...base, AIVYX_EMAIL_TRUSTED_HOP: 'mx.example.net', AIVYX_EMAIL_TRUSTED_HOP_MTA: 'sendmail' }, secret),
    ).rejects.toThrow(/AIVYX_EMAIL_TRUSTED_HOP_MTA="sendmail": must be postfix or exim/);
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_TRUSTED_HOP_MTA: 'exim' }, secret)).rejects.toThrow(
      /without AIVYX_EMAIL_TRUSTED_HOP/,
    );
    await expect(emailConfigFromEnv({ ...base, AIVYX_EMAIL_TRUSTED_RECEIVER: 'mx.example.net' }, secret)).rejects.toThrow(/no longer read/);
  });
});
