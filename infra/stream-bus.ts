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
}

/** The NOTIFY channel. */
export const STREAM_CHANNEL = 'aivyx_stream';
// NOTIFY payloads must stay under 8,000 bytes: a larger event travels in numbered parts.
const PART_CHARS = 7_000;
const NONCE = 24;
const RECONNECT_MS = [250, 1_000, 2_000, 5_000];

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
  const pending = new Map<string, { parts: string[]; got: number }>();
  const receive = (raw: string | undefined) => {
    let part: Part;
    try {
      part = JSON.parse(raw ?? '') as Part;
    } catch {
      return;
    }
    if (!hub.has(part.k)) return;
    let data = part.d;
    if (part.n > 1) {
      const p = pending.get(part.m) ?? { parts: new Array<string>(part.n).fill(''), got: 0 };
      if (p.parts[part.i] === '') p.got++;
      p.parts[part.i] = part.d;
      pending.set(part.m, p);
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
      c.on('notification', (n) => receive(n.payload));
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
    async stop() {
      await queue.catch(() => undefined);
      await Promise.all([listener.close(), publisher.close()]);
    },
  };
}
