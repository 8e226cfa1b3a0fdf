/**
 * Email configuration from the environment (read only by composition roots). Passwords are
 * sealed secrets named by AIVYX_EMAIL_IMAP_PASSWORD_SECRET / AIVYX_EMAIL_SMTP_PASSWORD_SECRET;
 * they never sit in the environment themselves.
 */
import { AivyxError } from '../../core/errors.js';
import type { EmailChannelOptions, ImapSettings, SmtpSettings } from './email-channel.js';
import { HOP_MTAS, type TrustedHop } from './received.js';
import { validateEmailAllowlist } from './trust.js';

/** The environment-derived part of `EmailChannelOptions`. */
export type EmailConfig = Pick<EmailChannelOptions, 'imap' | 'smtp' | 'address' | 'backlog'> & {
  allowlist: string[];
  trustedHop?: TrustedHop;
  authservId?: string;
  maxAttachmentBytes?: number;
};

function port(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new AivyxError('Config', `${name} "${raw}" is not a port`);
  return n;
}

function bool(raw: string | undefined, fallback: boolean, name: string): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new AivyxError('Config', `${name} must be true or false, got "${raw}"`);
}

/**
 * Reads AIVYX_EMAIL_* from `env`; undefined when AIVYX_EMAIL_ADDRESS is unset (the channel is
 * off). `secret(name)` reads the sealed `secrets` domain.
 */
export async function emailConfigFromEnv(env: Record<string, string | undefined>, secret: (name: string) => Promise<string | undefined>): Promise<EmailConfig | undefined> {
  const address = env.AIVYX_EMAIL_ADDRESS?.trim();
  if (!address) return undefined;
  validateEmailAllowlist([address]);
  const need = (name: string): string => {
    const v = env[name]?.trim();
    if (!v) throw new AivyxError('Config', `${name} is required when AIVYX_EMAIL_ADDRESS is set`, { hint: 'see docs/EMAIL.md' });
    return v;
  };
  const password = async (varName: string, fallbackName?: string): Promise<string> => {
    const name = env[varName]?.trim() || fallbackName;
    if (!name) throw new AivyxError('Config', `${varName} must name the secret holding the password`, { hint: `aivyx secrets set email-password, then ${varName}=email-password` });
    const value = await secret(name);
    if (!value) throw new AivyxError('Config', `the email password secret "${name}" is not set`, { hint: `aivyx secrets set ${name}` });
    return value;
  };
  const imapPort = port(env.AIVYX_EMAIL_IMAP_PORT, 993, 'AIVYX_EMAIL_IMAP_PORT');
  const startTls = env.AIVYX_EMAIL_IMAP_STARTTLS?.trim();
  if (startTls && !['required', 'opportunistic', 'never'].includes(startTls)) throw new AivyxError('Config', `AIVYX_EMAIL_IMAP_STARTTLS must be required, opportunistic or never, got "${startTls}"`);
  const imapSecretName = env.AIVYX_EMAIL_IMAP_PASSWORD_SECRET?.trim();
  const imap: ImapSettings = {
    host: need('AIVYX_EMAIL_IMAP_HOST'),
    port: imapPort,
    secure: bool(env.AIVYX_EMAIL_IMAP_SECURE, imapPort === 993, 'AIVYX_EMAIL_IMAP_SECURE'),
    ...(startTls ? { startTls: startTls as NonNullable<ImapSettings['startTls']> } : {}),
    user: env.AIVYX_EMAIL_IMAP_USER?.trim() || address,
    password: await password('AIVYX_EMAIL_IMAP_PASSWORD_SECRET'),
    mailbox: env.AIVYX_EMAIL_IMAP_MAILBOX?.trim() || 'INBOX',
  };
  const smtpPort = port(env.AIVYX_EMAIL_SMTP_PORT, 587, 'AIVYX_EMAIL_SMTP_PORT');
  const smtpUser = env.AIVYX_EMAIL_SMTP_USER?.trim() || imap.user;
  const smtp: SmtpSettings = {
    host: need('AIVYX_EMAIL_SMTP_HOST'),
    port: smtpPort,
    secure: bool(env.AIVYX_EMAIL_SMTP_SECURE, smtpPort === 465, 'AIVYX_EMAIL_SMTP_SECURE'),
    requireTls: bool(env.AIVYX_EMAIL_SMTP_REQUIRE_TLS, smtpPort === 587, 'AIVYX_EMAIL_SMTP_REQUIRE_TLS'),
    ...(bool(env.AIVYX_EMAIL_SMTP_AUTH, true, 'AIVYX_EMAIL_SMTP_AUTH') ? { user: smtpUser, password: await password('AIVYX_EMAIL_SMTP_PASSWORD_SECRET', imapSecretName) } : {}),
  };
  const allowlist = (env.AIVYX_EMAIL_ALLOWLIST ?? '').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
  validateEmailAllowlist(allowlist);
  const backlog = env.AIVYX_EMAIL_BACKLOG?.trim();
  if (backlog && backlog !== 'new' && backlog !== 'all') throw new AivyxError('Config', `AIVYX_EMAIL_BACKLOG must be new or all, got "${backlog}"`);
  const maxRaw = env.AIVYX_EMAIL_MAX_ATTACHMENT_BYTES?.trim();
  const maxAttachmentBytes = maxRaw ? Number(maxRaw) : undefined;
  if (maxAttachmentBytes !== undefined && (!Number.isInteger(maxAttachmentBytes) || maxAttachmentBytes < 0)) throw new AivyxError('Config', `AIVYX_EMAIL_MAX_ATTACHMENT_BYTES "${maxRaw}" is not a byte count`);
  if (env.AIVYX_EMAIL_TRUSTED_RECEIVER?.trim()) {
    // Its old meaning read the client IP from any `[ip]` in the header, HELO included: refuse rather than reinterpret it.
    throw new AivyxError('Config', 'AIVYX_EMAIL_TRUSTED_RECEIVER is no longer read', { hint: 'set AIVYX_EMAIL_TRUSTED_HOP=<host in by> and AIVYX_EMAIL_TRUSTED_HOP_MTA=postfix|exim, or AIVYX_EMAIL_AUTHSERV_ID (docs/EMAIL.md, Trust)' });
  }
  const hopHost = env.AIVYX_EMAIL_TRUSTED_HOP?.trim();
  const hopMta = env.AIVYX_EMAIL_TRUSTED_HOP_MTA?.trim().toLowerCase();
  if (hopHost && !HOP_MTAS.includes(hopMta as TrustedHop['mta'])) throw new AivyxError('Config', `AIVYX_EMAIL_TRUSTED_HOP_MTA must be ${HOP_MTAS.join(' or ')} when AIVYX_EMAIL_TRUSTED_HOP is set, got "${hopMta ?? ''}"`, { hint: 'the Received format of that host decides where the client IP is read (docs/EMAIL.md)' });
  if (!hopHost && hopMta) throw new AivyxError('Config', 'AIVYX_EMAIL_TRUSTED_HOP_MTA is set without AIVYX_EMAIL_TRUSTED_HOP');
  const authservId = env.AIVYX_EMAIL_AUTHSERV_ID?.trim();
  return {
    address,
    imap,
    smtp,
    allowlist,
    ...(hopHost ? { trustedHop: { host: hopHost, mta: hopMta as TrustedHop['mta'] } } : {}),
    ...(authservId ? { authservId } : {}),
    ...(backlog ? { backlog: backlog as 'new' | 'all' } : {}),
    ...(maxAttachmentBytes !== undefined ? { maxAttachmentBytes } : {}),
  };
}

/** The channel options a configuration gives (the rest — gateway, storage, deliveries, missions, tokens — comes from the stack). */
export function emailOptionsFromConfig(c: EmailConfig): Pick<EmailChannelOptions, 'imap' | 'smtp' | 'address' | 'backlog' | 'trust' | 'maxAttachmentBytes'> {
  return {
    imap: c.imap,
    smtp: c.smtp,
    address: c.address,
    ...(c.backlog ? { backlog: c.backlog } : {}),
    trust: { allowlist: c.allowlist, ...(c.trustedHop ? { trustedHop: c.trustedHop } : {}), ...(c.authservId ? { authservId: c.authservId } : {}) },
    ...(c.maxAttachmentBytes !== undefined ? { maxAttachmentBytes: c.maxAttachmentBytes } : {}),
  };
}
