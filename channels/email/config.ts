/**
 * Email configuration from the environment (read only by composition roots), parsed through the
 * configuration table (`infra/config/env-table.ts`). Passwords are
 * sealed secrets named by AIVYX_EMAIL_IMAP_PASSWORD_SECRET / AIVYX_EMAIL_SMTP_PASSWORD_SECRET;
 * they never sit in the environment themselves.
 */
import { AivyxError } from '../../core/errors.js';
import { envValue } from '../../infra/config.js';
import type { EmailChannelOptions, ImapSettings, SmtpSettings } from './email-channel.js';
import type { TrustedHop } from './received.js';
import { validateEmailAllowlist } from './trust.js';

/** The environment-derived part of `EmailChannelOptions`. */
export type EmailConfig = Pick<EmailChannelOptions, 'imap' | 'smtp' | 'address' | 'backlog'> & {
  allowlist: string[];
  trustedHop?: TrustedHop;
  authservId?: string;
  maxAttachmentBytes?: number;
};

/** Everything but the passwords: checked at start-up before anything opens (secret names only). */
export interface EmailSettings {
  address: string;
  imap: Omit<ImapSettings, 'password'> & { passwordSecret: string };
  smtp: Omit<SmtpSettings, 'password'> & { passwordSecret?: string };
  allowlist: string[];
  trustedHop?: TrustedHop;
  authservId?: string;
  backlog?: 'new' | 'all';
  maxAttachmentBytes?: number;
}

/** Reads and checks AIVYX_EMAIL_* without touching secrets; undefined when the channel is off. */
export function emailSettingsFromEnv(env: Record<string, string | undefined>): EmailSettings | undefined {
  const address = envValue(env, 'AIVYX_EMAIL_ADDRESS')?.trim();
  if (!address) return undefined;
  validateEmailAllowlist([address]);
  const need = (name: 'AIVYX_EMAIL_IMAP_HOST' | 'AIVYX_EMAIL_SMTP_HOST'): string => {
    const v = envValue(env, name)?.trim();
    if (!v) throw new AivyxError('Config', `${name} is required when AIVYX_EMAIL_ADDRESS is set`, { hint: 'see docs/EMAIL.md' });
    return v;
  };
  const imapSecret = envValue(env, 'AIVYX_EMAIL_IMAP_PASSWORD_SECRET')?.trim();
  if (!imapSecret)
    throw new AivyxError('Config', 'AIVYX_EMAIL_IMAP_PASSWORD_SECRET must name the secret holding the password', {
      hint: 'aivyx secrets set email-password, then AIVYX_EMAIL_IMAP_PASSWORD_SECRET=email-password',
    });
  const imapPort = envValue(env, 'AIVYX_EMAIL_IMAP_PORT');
  const startTls = envValue(env, 'AIVYX_EMAIL_IMAP_STARTTLS');
  const imapUser = envValue(env, 'AIVYX_EMAIL_IMAP_USER')?.trim() || address;
  const smtpPort = envValue(env, 'AIVYX_EMAIL_SMTP_PORT');
  const allowlist = envValue(env, 'AIVYX_EMAIL_ALLOWLIST').map((a) => a.toLowerCase());
  validateEmailAllowlist(allowlist);
  const backlog = envValue(env, 'AIVYX_EMAIL_BACKLOG');
  const maxAttachmentBytes = envValue(env, 'AIVYX_EMAIL_MAX_ATTACHMENT_BYTES');
  if (envValue(env, 'AIVYX_EMAIL_TRUSTED_RECEIVER')?.trim()) {
    // Its old meaning read the client IP from any `[ip]` in the header, HELO included: refuse rather than reinterpret it.
    throw new AivyxError('Config', 'AIVYX_EMAIL_TRUSTED_RECEIVER is no longer read', {
      hint: 'set AIVYX_EMAIL_TRUSTED_HOP=<host in by> and AIVYX_EMAIL_TRUSTED_HOP_MTA=postfix|exim, or AIVYX_EMAIL_AUTHSERV_ID (docs/EMAIL.md, Trust)',
    });
  }
  const hopHost = envValue(env, 'AIVYX_EMAIL_TRUSTED_HOP')?.trim();
  const hopMta = envValue(env, 'AIVYX_EMAIL_TRUSTED_HOP_MTA');
  if (hopHost && !hopMta)
    throw new AivyxError('Config', 'AIVYX_EMAIL_TRUSTED_HOP_MTA must be postfix or exim when AIVYX_EMAIL_TRUSTED_HOP is set', {
      hint: 'the Received format of that host decides where the client IP is read (docs/EMAIL.md)',
    });
  if (!hopHost && hopMta) throw new AivyxError('Config', 'AIVYX_EMAIL_TRUSTED_HOP_MTA is set without AIVYX_EMAIL_TRUSTED_HOP');
  const authservId = envValue(env, 'AIVYX_EMAIL_AUTHSERV_ID')?.trim();
  return {
    address,
    imap: {
      host: need('AIVYX_EMAIL_IMAP_HOST'),
      port: imapPort,
      secure: envValue(env, 'AIVYX_EMAIL_IMAP_SECURE') ?? imapPort === 993,
      ...(startTls ? { startTls } : {}),
      user: imapUser,
      passwordSecret: imapSecret,
      mailbox: envValue(env, 'AIVYX_EMAIL_IMAP_MAILBOX').trim() || 'INBOX',
    },
    smtp: {
      host: need('AIVYX_EMAIL_SMTP_HOST'),
      port: smtpPort,
      secure: envValue(env, 'AIVYX_EMAIL_SMTP_SECURE') ?? smtpPort === 465,
      requireTls: envValue(env, 'AIVYX_EMAIL_SMTP_REQUIRE_TLS') ?? smtpPort === 587,
      ...(envValue(env, 'AIVYX_EMAIL_SMTP_AUTH')
        ? {
            user: envValue(env, 'AIVYX_EMAIL_SMTP_USER')?.trim() || imapUser,
            passwordSecret: envValue(env, 'AIVYX_EMAIL_SMTP_PASSWORD_SECRET')?.trim() || imapSecret,
          }
        : {}),
    },
    allowlist,
    ...(hopHost && hopMta ? { trustedHop: { host: hopHost, mta: hopMta } } : {}),
    ...(authservId ? { authservId } : {}),
    ...(backlog ? { backlog } : {}),
    ...(maxAttachmentBytes !== undefined ? { maxAttachmentBytes } : {}),
  };
}

/**
 * Reads AIVYX_EMAIL_* from `env`; undefined when AIVYX_EMAIL_ADDRESS is unset (the channel is
 * off). `secret(name)` reads the sealed `secrets` domain.
 */
export async function emailConfigFromEnv(
  env: Record<string, string | undefined>,
  secret: (name: string) => Promise<string | undefined>,
): Promise<EmailConfig | undefined> {
  const s = emailSettingsFromEnv(env);
  if (!s) return undefined;
  const password = async (name: string): Promise<string> => {
    const value = await secret(name);
    if (!value) throw new AivyxError('Config', `the email password secret "${name}" is not set`, { hint: `aivyx secrets set ${name}` });
    return value;
  };
  const { passwordSecret: imapSecret, ...imap } = s.imap;
  const { passwordSecret: smtpSecret, ...smtp } = s.smtp;
  return {
    ...s,
    imap: { ...imap, password: await password(imapSecret) },
    smtp: { ...smtp, ...(smtpSecret ? { password: await password(smtpSecret) } : {}) },
  };
}

/** The channel options a configuration gives (the rest — gateway, storage, deliveries, missions, tokens — comes from the stack). */
export function emailOptionsFromConfig(
  c: EmailConfig,
): Pick<EmailChannelOptions, 'imap' | 'smtp' | 'address' | 'backlog' | 'trust' | 'maxAttachmentBytes'> {
  return {
    imap: c.imap,
    smtp: c.smtp,
    address: c.address,
    ...(c.backlog ? { backlog: c.backlog } : {}),
    trust: {
      allowlist: c.allowlist,
      ...(c.trustedHop ? { trustedHop: c.trustedHop } : {}),
      ...(c.authservId ? { authservId: c.authservId } : {}),
    },
    ...(c.maxAttachmentBytes !== undefined ? { maxAttachmentBytes: c.maxAttachmentBytes } : {}),
  };
}
