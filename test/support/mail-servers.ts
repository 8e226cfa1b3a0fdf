/**
 * Real mail servers for the email channel tests: a Dovecot IMAP server (a child process with its
 * own config, passwd file and Maildir in a temp dir, plain auth without TLS on 127.0.0.1) and an
 * SMTP server from `smtp-server` that delivers mail for the assistant's address into that
 * Maildir (adding its own Received and Return-Path headers, as an MTA does), and captures every
 * other message as outbound mail the tests can read.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/** Where Dovecot lives on Debian (`apt-get install dovecot-imapd`). */
export const DOVECOT_BIN = process.env.AIVYX_TEST_DOVECOT ?? '/usr/sbin/dovecot';

/** True when Dovecot is installed (tests are skipped with a how-to otherwise). */
export function dovecotAvailable(): boolean {
  return existsSync(DOVECOT_BIN);
}

/** A free TCP port on 127.0.0.1 (bound and released; a small race we accept in tests). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A running Dovecot instance. */
export interface Dovecot {
  host: string;
  port: number;
  user: string;
  password: string;
  /** The user's Maildir (cur/ new/ tmp/). */
  maildir: string;
  /** Disconnects every IMAP session of the user (`doveadm kick`). */
  kick(): void;
  /** Kills the Dovecot master and its children (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts Dovecot again on the same port and Maildir. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts Dovecot for one passwd-file user whose Maildir is in a fresh temp dir. */
export async function startDovecot(opts: { user?: string; password?: string } = {}): Promise<Dovecot> {
  const dir = mkdtempSync(join(tmpdir(), 'aivyx-dovecot-'));
  const user = opts.user ?? 'assistant';
  const password = opts.password ?? randomBytes(9).toString('base64url');
  const port = await freePort();
  const me = userInfo();
  const root = me.uid === 0;
  // As root, Dovecot drops privileges to its own users; otherwise everything runs as us.
  const internal = root ? 'dovecot' : me.username;
  const login = root ? 'dovenull' : me.username;
  const maildir = join(dir, 'Maildir');
  for (const sub of ['cur', 'new', 'tmp']) mkdirSync(join(maildir, sub), { recursive: true });
  // Dovecot refuses to run mail processes as root: as root, the mail user is `dovecot`, owning the Maildir.
  const mailUid = root ? Number(execFileSync('id', ['-u', 'dovecot']).toString().trim()) : me.uid;
  const mailGid = root ? Number(execFileSync('id', ['-g', 'dovecot']).toString().trim()) : me.gid;
  if (root) for (const p of [maildir, ...['cur', 'new', 'tmp'].map((s) => join(maildir, s))]) chownSync(p, mailUid, mailGid);
  mkdirSync(join(dir, 'run'), { recursive: true });
  mkdirSync(join(dir, 'state'), { recursive: true });
  // Dovecot's auth process runs as its internal user: it must be able to reach the passwd file.
  chmodSync(dir, 0o711);
  writeFileSync(join(dir, 'passwd'), `${user}:{PLAIN}${password}::::::\n`, { mode: 0o644 });
  const conf = join(dir, 'dovecot.conf');
  writeFileSync(
    conf,
    [
      `base_dir = ${join(dir, 'run')}`,
      `state_dir = ${join(dir, 'state')}`,
      `log_path = ${join(dir, 'dovecot.log')}`,
      'protocols = imap',
      'listen = 127.0.0.1',
      'ssl = no',
      'disable_plaintext_auth = no',
      'auth_mechanisms = plain login',
      `default_internal_user = ${internal}`,
      `default_internal_group = ${root ? 'dovecot' : execFileSync('id', ['-gn']).toString().trim()}`,
      `default_login_user = ${login}`,
      `first_valid_uid = ${mailUid}`,
      `first_valid_gid = ${mailGid}`,
      `mail_location = maildir:${maildir}`,
      'mailbox_idle_check_interval = 1 secs',
      'mail_fsync = never',
      `passdb {\n  driver = passwd-file\n  args = scheme=PLAIN username_format=%u ${join(dir, 'passwd')}\n}`,
      `userdb {\n  driver = static\n  args = uid=${mailUid} gid=${mailGid} home=${dir}\n}`,
      `service imap-login {\n  inet_listener imap {\n    address = 127.0.0.1\n    port = ${port}\n  }\n  inet_listener imaps {\n    port = 0\n  }\n}`,
      'service anvil {\n  chroot =\n}',
      'service imap-login {\n  chroot =\n}',
      `service stats {\n  unix_listener stats-reader {\n    mode = 0666\n  }\n  unix_listener stats-writer {\n    mode = 0666\n  }\n}`,
      '',
    ].join('\n'),
  );
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const c = spawn(DOVECOT_BIN, ['-F', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    // A test process that dies must not leave its Dovecot running.
    const reap = (): void => void c.kill('SIGTERM');
    process.once('exit', reap);
    c.once('exit', () => process.removeListener('exit', reap));
    let stderr = '';
    c.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child = c;
    try {
      await waitForPort(port, 10_000);
    } catch (err) {
      const log = existsSync(join(dir, 'dovecot.log')) ? readFileSync(join(dir, 'dovecot.log'), 'utf8') : '';
      throw new Error(`Dovecot did not start: ${(err as Error).message}\n${stderr}\n${log}`);
    }
  };
  const kill = async (): Promise<void> => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise<void>((r) => c.once('exit', () => r()));
    // The whole process group is not ours to kill; the master takes its children on SIGTERM,
    // but a crash is SIGKILL: kick the sessions first so no orphaned imap process keeps a client.
    try {
      execFileSync('doveadm', ['-c', conf, 'kick', user], { stdio: 'ignore' });
    } catch {
      // no sessions
    }
    c.kill('SIGKILL');
    await exited;
    // The listener is gone with the master; wait until the port is free to bind again.
    for (let i = 0; i < 100; i++) {
      const busy = await new Promise<boolean>((resolve) => {
        const s = connect(port, '127.0.0.1');
        s.once('connect', () => {
          s.destroy();
          resolve(true);
        });
        s.once('error', () => resolve(false));
      });
      if (!busy) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await start();
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    maildir,
    kick() {
      execFileSync('doveadm', ['-c', conf, 'kick', user], { stdio: 'ignore' });
    },
    kill,
    start,
    async stop() {
      const c = child;
      child = undefined;
      if (c && c.exitCode === null) {
        const exited = new Promise<void>((r) => c.once('exit', () => r()));
        c.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One message the SMTP server accepted. */
export interface CapturedMail {
  from: string;
  to: string[];
  raw: Buffer;
  parsed: ParsedMail;
  /** True when it was delivered into the Maildir (addressed to the mailbox owner). */
  local: boolean;
}

/** A running SMTP server. */
export interface SmtpTestServer {
  host: string;
  port: number;
  /** The name it puts in `by` of its Received header (configure it as the trusted receiver). */
  hostname: string;
  /** Every accepted message, in order. */
  mails: CapturedMail[];
  /** Messages to anyone but the mailbox owner (the assistant's outbound mail). */
  outbound(): CapturedMail[];
  /** Refuses the next `n` outbound messages (not for the mailbox owner) with `code` (e.g. 451) at DATA. */
  refuseNext(n: number, code: number, message?: string): void;
  /** How many DATA commands were refused so far. */
  refused: number;
  /** Waits until `pred` holds over the captured mail. */
  waitFor(pred: (mails: CapturedMail[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The Received header a real MTA writes for the client: Postfix `from HELO (rdns [IP])`, Exim
 * `from rdns ([IP] helo=HELO)` or, without a verified host name, `from [IP] (helo=HELO)` — the
 * HELO omitted when it repeats the name or address.
 */
function receivedHeader(format: 'postfix' | 'exim', session: SMTPServerSession, by: string, id: string, to: string): string {
  const ip = session.remoteAddress;
  const helo = session.hostNameAppearsAs;
  const rest = `by ${by} with ESMTP id ${id}\r\n\tfor <${to}>; ${new Date().toUTCString()}`;
  const literal = session.clientHostname.startsWith('[');
  if (format === 'postfix') return `Received: from ${helo} (${literal ? 'unknown' : session.clientHostname} [${ip}])\r\n\t${rest}\r\n`;
  const heloItem = helo === session.clientHostname || helo === `[${ip}]` ? '' : `helo=${helo}`;
  const from = literal
    ? `[${ip}]${heloItem ? ` (${heloItem})` : ''}`
    : `${session.clientHostname} ([${ip}]${heloItem ? ` ${heloItem}` : ''})`;
  return `Received: from ${from}\r\n\t${rest}\r\n`;
}

/**
 * Starts an SMTP server that delivers mail for `localAddress` (and its plus-addresses) into
 * `maildir` and captures the rest. Like a real MTA it records the connecting IP and HELO in a
 * Received header it adds at the top (in Postfix's or Exim's format; no reverse DNS lookup, so
 * Exim's is the `from [IP] (helo=…)` form), with the envelope sender in Return-Path.
 */
export async function startSmtpServer(opts: {
  maildir: string;
  localAddress: string;
  hostname?: string;
  receivedFormat?: 'postfix' | 'exim';
}): Promise<SmtpTestServer> {
  const hostname = opts.hostname ?? 'mx.aivyx.test';
  const format = opts.receivedFormat ?? 'postfix';
  const [localPart, localDomain] = opts.localAddress.toLowerCase().split('@') as [string, string];
  const isLocal = (addr: string): boolean => {
    const [l, d] = addr.toLowerCase().split('@');
    return d === localDomain && (l === localPart || l?.startsWith(`${localPart}+`) === true);
  };
  const mails: CapturedMail[] = [];
  const refusals: { code: number; message: string }[] = [];
  let seq = 0;
  const state = { refused: 0 };
  const server = new SMTPServer({
    name: hostname,
    authOptional: true,
    disableReverseLookup: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    size: 50 * 1024 * 1024,
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        // Refusals apply to outbound mail only (the assistant's sends), never to a test's inbound mail.
        const outbound = !session.envelope.rcptTo.some((r) => isLocal(r.address));
        const refusal = outbound ? refusals.shift() : undefined;
        if (refusal) {
          state.refused++;
          const err = Object.assign(new Error(refusal.message), { responseCode: refusal.code });
          callback(err);
          return;
        }
        void (async () => {
          const body = Buffer.concat(chunks);
          const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
          const to = session.envelope.rcptTo.map((r) => r.address);
          const id = `${Date.now()}.${process.pid}.${++seq}`;
          const received = `Return-Path: <${from}>\r\n${receivedHeader(format, session, hostname, id, to[0] ?? '')}`;
          const raw = Buffer.concat([Buffer.from(received), body]);
          const local = to.some(isLocal);
          if (local) {
            // Maildir delivery: write in tmp/, then rename into new/ (atomic for Dovecot).
            const name = `${id}.aivyx-test`;
            writeFileSync(join(opts.maildir, 'tmp', name), raw);
            renameSync(join(opts.maildir, 'tmp', name), join(opts.maildir, 'new', name));
          }
          mails.push({ from, to, raw, parsed: await simpleParser(raw), local });
          callback();
        })().catch((err: unknown) => callback(err as Error));
      });
    },
  });
  const port = await freePort();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    host: '127.0.0.1',
    port,
    hostname,
    mails,
    outbound: () => mails.filter((m) => !m.local),
    refuseNext(n, code, message = 'Try again later') {
      for (let i = 0; i < n; i++) refusals.push({ code, message });
    },
    get refused() {
      return state.refused;
    },
    async waitFor(pred, timeoutMs = 30_000, what = 'mail') {
      const until = Date.now() + timeoutMs;
      while (!pred(mails)) {
        if (Date.now() > until)
          throw new Error(
            `timed out waiting for ${what}; have ${mails.length}: ${mails.map((m) => `${m.from}→${m.to.join(',')} "${m.parsed.subject ?? ''}"`).join('; ')}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
