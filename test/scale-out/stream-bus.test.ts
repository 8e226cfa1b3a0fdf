/**
 * Stream events between processes over PostgreSQL LISTEN/NOTIFY: in order, whole when larger than a
 * NOTIFY payload, and sealed — a database user who NOTIFYs cannot put a line into someone's turn.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelEvent } from '../../core/channel.js';
import { STREAM_CHANNEL, startPgStreamBus } from '../../infra/stream-bus.js';
import { createTestDatabase } from '../support/postgres.js';

const key = new Uint8Array(32).fill(7);
const otherKey = new Uint8Array(32).fill(9);

describe('the PostgreSQL stream bus', () => {
  let database: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    database = await createTestDatabase('aivyx_bus');
  });
  afterAll(() => database?.drop());

  it('carries a turn’s events from one process’s bus to another’s, in order and whole, and drops forged ones', async () => {
    const worker = await startPgStreamBus({ databaseUrl: database.url, key });
    const gateway = await startPgStreamBus({ databaseUrl: database.url, key });
    const intruder = await startPgStreamBus({ databaseUrl: database.url, key: otherKey });
    const heard: ChannelEvent[] = [];
    const other: ChannelEvent[] = [];
    const stop = gateway.subscribe('turn/a', (e) => heard.push(e));
    gateway.subscribe('turn/b', (e) => other.push(e));
    try {
      const long = 'x'.repeat(20_000);
      for (let i = 0; i < 50; i++) worker.publish('turn/a', { type: 'text', text: `part ${i} ` });
      worker.publish('turn/a', { type: 'text', text: long });
      worker.publish('turn/a', { type: 'status', text: 'done' });
      // Sealed under another install's key, and a raw NOTIFY in the bus's format: neither arrives.
      intruder.publish('turn/a', { type: 'text', text: 'forged' });
      const c = new pg.Client({ connectionString: database.url });
      await c.connect();
      await c.query('select pg_notify($1, $2)', [STREAM_CHANNEL, JSON.stringify({ k: 'turn/a', m: '', i: 0, n: 1, d: 'Zm9yZ2Vk' })]);
      // Malformed parts from anyone who can connect: none crashes the listener or allocates for them.
      const uuid = '00000000-0000-4000-8000-000000000000';
      for (const junk of [
        'null',
        '7',
        '{"k":"turn/a"}',
        JSON.stringify({ k: 'turn/a', m: uuid, i: 0, n: 2 ** 32, d: 'x' }),
        JSON.stringify({ k: 'turn/a', m: uuid, i: 1.5, n: 2, d: 'x' }),
        JSON.stringify({ k: 'turn/a', m: uuid, i: 9, n: 2, d: 'x' }),
        JSON.stringify({ k: 'turn/a', m: 'not-a-uuid', i: 0, n: 2, d: 'x' }),
      ])
        await c.query('select pg_notify($1, $2)', [STREAM_CHANNEL, junk]);
      await c.end();
      worker.publish('turn/a', { type: 'status', text: 'last' });
      // What a step awaits before it returns: everything it published has gone out.
      await worker.flush();
      for (const end = Date.now() + 10_000; heard.length < 53;) {
        if (Date.now() > end) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 300));
      expect(
        heard.map((e) =>
          e.type === 'text' && e.text.length > 100 ? `long ${e.text.length}` : e.type === 'text' || e.type === 'status' ? e.text : e.type,
        ),
      ).toEqual([...Array.from({ length: 50 }, (_, i) => `part ${i} `), 'long 20000', 'done', 'last']);
      // Only listeners of a turn hear it.
      expect(other).toEqual([]);
    } finally {
      stop();
      await Promise.all([worker.stop(), gateway.stop(), intruder.stop()]);
    }
  });
});
