/**
 * Stream events across processes: a worker's LLM step streams into the gateway that serves the
 * channel, whichever processes those are. On PostgreSQL every event goes out by NOTIFY on one
 * channel and comes back through LISTEN into each process's own `StreamHub`; no new server is
 * needed. On PGlite (one process) the hub alone is the bus.
 *
 * Ordering: a process publishes over one connection, one event at a time, and PostgreSQL delivers
 * one connection's notifications in commit order, so a turn's events (which one activity attempt
 * publishes) arrive in order; a retried step on another worker starts with `step_restarted`.
 * Events are sealed (XChaCha20-Poly1305 under the `stream` subkey, the key as associated data):
 * anyone who can LISTEN on the database reads nothing and cannot inject an event into a turn.
 * Best effort, as the hub is: an event lost while a connection is re-made costs a progress line.
 */
import { randomUUID } from 'node:crypto';
import { xchacha20poly1305 } from '@noble/ciphers/chacha.js';
import { randomBytes } from '@noble/ciphers/utils.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import pg from 'pg';
import { StreamHub, type ChannelEvent, type ChannelEventListener } from './stream-hub.js';

/** Publish/subscribe by key (a turn id, a mission id): what activities and channels see. */
export interface StreamBus {
  publish(key: string, event: ChannelEvent): void;
  subscribe(key: string, listener: ChannelEventListener): () => void;
  /** Resolves once every event published so far has gone out (bounded: a database that is down costs a wait, not a hang). */
  flush(): Promise<void>;
}

/** The NOTIFY channel. */
export const STREAM_CHANNEL = 'aivyx_stream';
// NOTIFY payloads must stay under 8,000 bytes: a larger event travels in numbered parts.
const PART_CHARS = 7_000;
const NONCE = 24;
const RECONNECT_MS = [250, 1_000, 2_000, 5_000];
// Anyone who can connect to the database may NOTIFY: a part is checked before anything is allocated
// for it, and unfinished events are bounded in number and age.
const MAX_PARTS = 64;
const MAX_KEY = 512;
const MAX_PENDING = 256;
const PENDING_MS = 10_000;
const MESSAGE_ID = /^[0-9a-f-]{36}$/;
// How long a flush waits for the queue: a step's text is worth a moment, not a stuck step.
const FLUSH_MS = 2_000;

/** A notification's payload as a part, or undefined when it is not one of ours. */
function parsePart(raw: string | undefined): Part | undefined {
  let p: unknown;
  try {
    p = JSON.parse(raw ?? '');
  } catch {
    return undefined;
  }
  if (typeof p !== 'object' || p === null) return undefined;
  const { k, m, i, n, d } = p as Record<string, unknown>;
  if (typeof k !== 'string' || k.length === 0 || k.length > MAX_KEY || typeof d !== 'string' || d.length > PART_CHARS) return undefined;
  if (!Number.isInteger(n) || !Number.isInteger(i) || (n as number) < 1 || (n as number) > MAX_PARTS) return undefined;
  if ((i as number) < 0 || (i as number) >= (n as number)) return undefined;
  if (typeof m !== 'string' || ((n as number) > 1 && !MESSAGE_ID.test(m))) return undefined;
  return { k, m, i: i as number, n: n as number, d };
}

interface Part {
  /** The key (turn or mission id): only processes listening to it open the event. */
  k: string;
  /** Message id, part number and count. */
  m: string;
  i: number;
  n: number;
  /** base64 of nonce ‖ ciphertext (this part's slice of it). */
  d: string;
}

function seal(key: Uint8Array, streamKey: string, event: ChannelEvent): string {
  const nonce = randomBytes(NONCE);
  const sealed = xchacha20poly1305(key, nonce, utf8ToBytes(streamKey)).encrypt(utf8ToBytes(JSON.stringify(event)));
  return Buffer.concat([nonce, sealed]).toString('base64');
}

function open(key: Uint8Array, streamKey: string, data: string): ChannelEvent | undefined {
  try {
    const bytes = Buffer.from(data, 'base64');
    const plain = xchacha20poly1305(key, bytes.subarray(0, NONCE), utf8ToBytes(streamKey)).decrypt(bytes.subarray(NONCE));
    return JSON.parse(Buffer.from(plain).toString('utf8')) as ChannelEvent;
  } catch {
    return undefined;
  }
}

/** Waits for `p` (its failure included) but no longer than `ms`. */
async function waitAtMost(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.catch(() => undefined), new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

/** A dedicated connection that comes back after it drops (the pool's connections are for queries). */
function resilientClient(url: string, onConnect: (c: pg.Client) => Promise<void>, onDown: () => void) {
  let client: pg.Client | undefined;
  let closed = false;
  let attempt = 0;
  let ready: Promise<pg.Client | undefined> = Promise.resolve(undefined);
  const connect = (): Promise<pg.Client | undefined> => {
    ready = (async () => {
      while (!closed) {
        const c = new pg.Client({ connectionString: url });
        c.on('error', () => undefined);
        try {
          await c.connect();
          await onConnect(c);
          attempt = 0;
          c.on('end', () => {
            if (client === c) client = undefined;
            if (!closed) {
              onDown();
              void connect();
            }
          });
          client = c;
          return c;
        } catch {
          await c.end().catch(() => undefined);
          await new Promise((r) => setTimeout(r, RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]));
        }
      }
      return undefined;
    })();
    return ready;
  };
  return {
    start: connect,
    current: async () => client ?? (await ready),
    async close() {
      closed = true;
      await client?.end().catch(() => undefined);
    },
  };
}

/** A bus over PostgreSQL LISTEN/NOTIFY; `stop()` closes its two connections. */
export async function startPgStreamBus(opts: { databaseUrl: string; key: Uint8Array }): Promise<StreamBus & { stop(): Promise<void> }> {
  const hub = new StreamHub();
  const pending = new Map<string, { key: string; parts: string[]; got: number; at: number }>();
  const receive = (raw: string | undefined) => {
    const part = parsePart(raw);
    if (!part || !hub.has(part.k)) return;
    let data = part.d;
    if (part.n > 1) {
      const now = Date.now();
      for (const [id, p] of pending) if (now - p.at > PENDING_MS) pending.delete(id);
      let p = pending.get(part.m);
      if (!p) {
        if (pending.size >= MAX_PENDING) return;
        p = { key: part.k, parts: new Array<string>(part.n).fill(''), got: 0, at: now };
        pending.set(part.m, p);
      }
      // A part that disagrees with its event's first part (another key or count) is not of that event.
      if (p.key !== part.k || p.parts.length !== part.n) return;
      if (p.parts[part.i] === '') p.got++;
      p.parts[part.i] = part.d;
      if (p.got < part.n) return;
      pending.delete(part.m);
      data = p.parts.join('');
    }
    const event = open(opts.key, part.k, data);
    if (event) hub.publish(part.k, event);
  };
  const listener = resilientClient(
    opts.databaseUrl,
    async (c) => {
      c.on('notification', (n) => {
        try {
          receive(n.payload);
        } catch {
          // a malformed notification costs nothing but itself
        }
      });
      await c.query(`LISTEN ${STREAM_CHANNEL}`);
    },
    () => pending.clear(),
  );
  const publisher = resilientClient(
    opts.databaseUrl,
    async () => undefined,
    () => undefined,
  );
  await Promise.all([listener.start(), publisher.start()]);
  // One publish at a time on one connection: that is what keeps a turn's events in order.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    publish(key, event) {
      const sealed = seal(opts.key, key, event);
      const n = Math.max(1, Math.ceil(sealed.length / PART_CHARS));
      const m = n > 1 ? randomUUID() : '';
      queue = queue.then(async () => {
        const c = await publisher.current();
        if (!c) return;
        for (let i = 0; i < n; i++) {
          const part: Part = { k: key, m, i, n, d: sealed.slice(i * PART_CHARS, (i + 1) * PART_CHARS) };
          await c.query('select pg_notify($1, $2)', [STREAM_CHANNEL, JSON.stringify(part)]).catch(() => undefined);
        }
      });
    },
    subscribe: (key, l) => hub.subscribe(key, l),
    flush: () => waitAtMost(queue, FLUSH_MS),
    async stop() {
      // What is queued gets a moment to go out; a database that is down must not hold the shutdown.
      await waitAtMost(queue, 1_000);
      await Promise.all([listener.close(), publisher.close()]);
    },
  };
}
