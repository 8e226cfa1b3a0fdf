/**
 * Test support for LLM providers: a tiny local server that replays recorded provider streams in small
 * chunks (so SSE events are cut anywhere), a recording sink, and the fixture loader.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { LlmStepSink } from '../../activities/llm/llm-provider.js';

const fixtures = join(import.meta.dirname, '../fixtures/llm');

/** A recorded fixture from test/fixtures/llm, with `{{DIR}}` replaced. */
export function fixture(name: string, dir = '/tmp/work'): string {
  return readFileSync(join(fixtures, name), 'utf8').replaceAll('{{DIR}}', dir);
}

/** One scripted HTTP reply. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Bytes per written chunk (default 7). */
  chunk?: number;
  /** Stop after writing this many bytes and keep the connection open. */
  hangAfter?: number;
}
/** One request the server received. */
export interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  at: number;
}
const servers: Array<() => Promise<void>> = [];

/** Closes every replay server started so far (register with `afterEach`). */
export async function closeReplayServers(): Promise<void> {
  for (const close of servers.splice(0)) await close();
}

/** Starts a server answering request n with `replies[n]` (the last one repeats); `pathPrefix` is appended to the URL. */
export async function replay(replies: Reply[], pathPrefix = ''): Promise<{ url: string; seen: Seen[]; closed: Promise<void>[] }> {
  const seen: Seen[] = [];
  const closed: Promise<void>[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString('utf8')));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
        at: Date.now(),
      });
      closed.push(new Promise((done) => res.on('close', () => done())));
      const r = replies[Math.min(seen.length - 1, replies.length - 1)] ?? { status: 500 };
      const status = r.status ?? 200;
      res.writeHead(status, { 'content-type': status === 200 ? 'text/event-stream' : 'application/json', ...r.headers });
      const bytes = Buffer.from(r.body ?? '', 'utf8');
      const limit = r.hangAfter ?? bytes.length;
      const step = r.chunk ?? 7;
      let i = 0;
      const pump = () => {
        if (i >= limit) {
          if (r.hangAfter === undefined) res.end();
          return;
        }
        res.write(bytes.subarray(i, Math.min(i + step, limit)));
        i += step;
        setImmediate(pump);
      };
      pump();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  servers.push(
    () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${pathPrefix}`, seen, closed };
}

/** An LLM step sink that records streamed chunks and heartbeats. */
export function sink(signal = new AbortController().signal): LlmStepSink & { chunks: string[]; beats: number } {
  const s = { chunks: [] as string[], beats: 0, signal, text: (c: string) => void s.chunks.push(c), heartbeat: () => void s.beats++ };
  return s;
}
