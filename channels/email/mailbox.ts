/**
 * The mailbox loop: an IMAP session (imapflow) opens the mailbox, hands every mail after the stored
 * UID to inbound, moves the UID past a mail only once it is handled, then IDLEs; a dropped session
 * reconnects with backoff. A new UIDVALIDITY re-reads the mailbox (Message-ID marks dedupe it).
 */
import { ImapFlow } from 'imapflow';
import type { DomainHandle } from '../../infra/storage/index.js';
import { createBackoff } from '../kit/backoff.js';
import { short } from './shared.js';

/** IMAP account and mailbox. */
export interface ImapSettings {
  host: string;
  port: number;
  /** Implicit TLS (port 993). Default false. */
  secure?: boolean;
  /** STARTTLS on a plain connection: `required`, `opportunistic` (default) or `never`. */
  startTls?: 'required' | 'opportunistic' | 'never';
  user: string;
  password: string;
  /** Default INBOX. */
  mailbox?: string;
}

interface ImapState {
  uidValidity: string;
  lastUid: number;
}

export interface MailboxDeps {
  imap: ImapSettings;
  store: DomainHandle;
  handleMail(raw: Buffer, truncated: boolean): Promise<void>;
  maxMail: number;
  backlog?: 'new' | 'all';
  reconnect?: { initialMs?: number; maxMs?: number };
  log(line: string): void;
}

/** A watched mailbox. */
export interface Mailbox {
  connected(): boolean;
  sessions(): number;
  stop(): Promise<void>;
}

export function watchMailbox(opts: MailboxDeps): Mailbox {
  const { store, handleMail, maxMail, log } = opts;
  const mailbox = opts.imap.mailbox ?? 'INBOX';
  const account = `${opts.imap.user}@${opts.imap.host}:${opts.imap.port}/${mailbox}`;
  const stateKey = `email/imap/${short(account)}`;
  let stopped = false;
  let client: ImapFlow | undefined;
  let isConnected = false;
  let sessionCount = 0;

  async function loadState(uidValidity: string, uidNext: number): Promise<ImapState> {
    const s = await store.getJson<ImapState>(stateKey);
    if (s && s.uidValidity === uidValidity) return s;
    // A new UIDVALIDITY renumbers the mailbox: start over; Message-IDs keep handled mail from running again.
    const fresh: ImapState = { uidValidity, lastUid: !s && (opts.backlog ?? 'new') === 'new' ? uidNext - 1 : 0 };
    if (s) log(`UIDVALIDITY of ${mailbox} changed (${s.uidValidity} → ${uidValidity}); re-reading it`);
    await store.putJson(stateKey, fresh);
    return fresh;
  }

  /** One IMAP session: open the mailbox, handle what is new, then IDLE until the connection closes. */
  async function session(c: ImapFlow): Promise<void> {
    const closed = new Promise<void>((resolve) => c.once('close', () => resolve()));
    const box = await c.mailboxOpen(mailbox);
    let state = await loadState(String(box.uidValidity), box.uidNext);
    let draining: Promise<void> | undefined;
    let again = false;
    const drainOnce = async (): Promise<void> => {
      const found = await c.search({ uid: `${state.lastUid + 1}:*` }, { uid: true });
      const uids = (found || []).filter((u) => u > state.lastUid).sort((a, b) => a - b);
      for (const uid of uids) {
        if (stopped) return;
        const meta = await c.fetchOne(String(uid), { uid: true, size: true }, { uid: true });
        const big = meta !== false && (meta.size ?? 0) > maxMail;
        const msg = await c.fetchOne(String(uid), { uid: true, source: big ? { maxLength: 64 * 1024 } : true }, { uid: true });
        if (msg && msg.source) await handleMail(msg.source, big);
        state = { ...state, lastUid: uid };
        await store.putJson(stateKey, state);
      }
    };
    const drain = (): Promise<void> => {
      if (draining) {
        again = true;
        return draining;
      }
      draining = (async () => {
        try {
          do {
            again = false;
            await drainOnce();
          } while (again && !stopped);
        } catch (err) {
          // Not handled (Temporal or the database is down): reconnect with backoff and read it again.
          if (!stopped) log(`handling new mail failed: ${(err as Error).message}; reconnecting`);
          c.close();
        } finally {
          draining = undefined;
        }
      })();
      return draining;
    };
    c.on('exists', () => void drain());
    isConnected = true;
    sessionCount++;
    await drain();
    await closed;
    isConnected = false;
  }

  const backoff = createBackoff(opts.reconnect?.initialMs ?? 500, opts.reconnect?.maxMs ?? 60_000);

  async function run(): Promise<void> {
    while (!stopped) {
      const c = new ImapFlow({
        host: opts.imap.host,
        port: opts.imap.port,
        secure: opts.imap.secure ?? false,
        ...(opts.imap.startTls === 'required' ? { doSTARTTLS: true } : opts.imap.startTls === 'never' ? { doSTARTTLS: false } : {}),
        auth: { user: opts.imap.user, pass: opts.imap.password },
        logger: false,
        // IDLE soon after our own commands, so new mail is seen at once; restarted every 5 min for NAT boxes.
        autoIdleDelay: 200,
        maxIdleTime: 5 * 60_000,
      } as ConstructorParameters<typeof ImapFlow>[0]);
      c.on('error', (err: Error) => {
        if (!stopped) log(`IMAP: ${err.message}`);
      });
      client = c;
      try {
        await c.connect();
        backoff.reset();
        await session(c);
      } catch (err) {
        if (!stopped) log(`IMAP session: ${(err as Error).message}`);
      } finally {
        isConnected = false;
        c.close();
      }
      if (stopped) return;
      log(`IMAP connection closed; reconnecting in ${backoff.next} ms`);
      await backoff.wait();
    }
  }
  const loop = run();
  return {
    connected: () => isConnected,
    sessions: () => sessionCount,
    async stop() {
      stopped = true;
      backoff.wake();
      try {
        await client?.logout();
      } catch {
        client?.close();
      }
      await loop;
    },
  };
}
