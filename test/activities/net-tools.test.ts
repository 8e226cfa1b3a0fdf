/**
 * net.fetch and net.post against real HTTP servers on 127.0.0.1 started by the test (no mocks of
 * undici), plus the adversarial URL and address corpus.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  blockedAddressReason,
  createNetFetchTool,
  createNetPostTool,
  idempotencyKeyFor,
  type HostResolver,
  type NetResponseOutput,
  type ToolRunContext,
} from '../../activities/tools/index.js';
import { CapabilitySet } from '../../core/capability/index.js';
import { netFetchTool, netPostTool } from '../../core/tools/net-tools.js';
import type { ToolDescriptor } from '../../core/tools.js';

const NET_TOOLS: ToolDescriptor[] = [netFetchTool, netPostTool];
import { toolContext } from '../support/tool-context.js';
import { aivyxFailure, errorKindOf } from '../support/aivyx-failure.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];
let server: Server;
let port = 0;
let base = '';

function handler(req: IncomingMessage, res: ServerResponse): void {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/hello') {
      res.writeHead(200, { 'content-type': 'text/plain', 'x-test': 'yes' });
      res.end('hello world');
    } else if (path === '/redirect') {
      res.writeHead(302, { location: '/secret' });
      res.end('moved');
    } else if (path === '/big') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = 'a'.repeat(64 * 1024);
      let sent = 0;
      const pump = (): void => {
        while (sent < 3 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    } else if (path === '/slow') {
      // Never answers; the client's deadline must end the call.
    } else if (path === '/echo') {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          method: req.method,
          contentType: req.headers['content-type'] ?? null,
          key: req.headers['idempotency-key'] ?? null,
          body,
        }),
      );
    } else {
      res.writeHead(404);
      res.end('nope');
    }
  });
}

beforeAll(async () => {
  server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const fetchTool = createNetFetchTool();
const postTool = createNetPostTool();
const heldFetch = (): string[] => [`net.fetch:${base}/`];
const heldPost = (): string[] => [`net.post:${base}/`];

async function fetchOut(input: unknown, held = heldFetch(), c?: Partial<ToolRunContext>): Promise<NetResponseOutput> {
  const r = await fetchTool.run(input, toolContext({ held, ...c }));
  if (r.kind !== 'completed') throw new Error('expected completed');
  expect(r.verified).toBe('NotApplicable');
  return r.output as NetResponseOutput;
}

describe('descriptors', () => {
  it('scope on the canonical URL', () => {
    expect(NET_TOOLS.map((t) => [t.id, t.idempotency])).toEqual([
      ['net.fetch', 'natural'],
      ['net.post', 'keyed'],
    ]);
    expect(netFetchTool.requiredScope({ url: 'HTTPS://API.Example.COM:443/v1/./items/../x?q=1#frag' })).toBe(
      'net.fetch:https://api.example.com/v1/x?q=1',
    );
    expect(netFetchTool.requiredScope({ url: 'http://127.0.0.1:8080' })).toBe('net.fetch:http://127.0.0.1:8080/');
    expect(
      netPostTool.requiredScope({ url: 'https://api.example.com/v1/items', method: 'POST', body: '{}', contentType: 'application/json' }),
    ).toBe('net.post:https://api.example.com/v1/items');
  });

  it('refuse bad methods, headers and bodies at parse', () => {
    const bad: Array<[ToolDescriptor, unknown]> = [
      [netFetchTool, { url: 'https://a.example/', method: 'POST' }],
      [netFetchTool, { url: 'https://a.example/', headers: { Host: 'evil.example' } }],
      [netFetchTool, { url: 'https://a.example/', headers: { 'X-A': 'a\r\nX-Injected: 1' } }],
      [netFetchTool, { url: 'https://a.example/', headers: { 'Transfer-Encoding': 'chunked' } }],
      [netFetchTool, { url: 'https://a.example/', headers: { 'bad name': 'x' } }],
      [netFetchTool, { url: 'https://a.example/', maxBytes: 0 }],
      [netFetchTool, { url: 'https://a.example/', timeoutMs: 10 * 60_000 }],
      [netFetchTool, { url: 'https://a.example/', follow: true }],
      [netPostTool, { url: 'https://a.example/', method: 'GET' }],
      [netPostTool, { url: 'https://a.example/' }],
      [netPostTool, { url: 'https://a.example/', method: 'POST', headers: { 'Idempotency-Key': 'mine' } }],
      [netPostTool, { url: 'https://a.example/', method: 'POST', headers: { 'Content-Length': '1' } }],
      [netPostTool, { url: 'https://a.example/', method: 'POST', contentType: 'application/json' }],
      [netPostTool, { url: 'https://a.example/', method: 'POST', body: 'x', contentType: 'json\r\nX: y' }],
      [netPostTool, { url: 'https://a.example/', method: 'POST', body: 'x'.repeat(1024 * 1024 + 1) }],
    ];
    for (const [tool, input] of bad)
      expect(
        errorKindOf(() => tool.requiredScope(input)),
        JSON.stringify(input).slice(0, 120),
      ).toBe('InvalidScope');
  });
});

describe('adversarial URL corpus', () => {
  const held = CapabilitySet.from(['net.fetch:https://api.example.com/v1']);
  const scope = (url: string): string => netFetchTool.requiredScope({ url });

  it('userinfo, IDN, ambiguous numeric hosts, IP literals, encodings and odd schemes are refused at parse', () => {
    for (const url of [
      'https://api.example.com@evil.example/v1',
      'https://user:pw@api.example.com/v1',
      'https://api.example.com%40evil.example/v1',
      'https://аpi.example.com/v1', // Cyrillic а
      'https://api.exam\u200bple.com/v1',
      'https://ｅxample.com/',
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0x7f.1/',
      'http://127.1/',
      'http://0177.0.0.1/',
      'http://127.000.000.001/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'https://api.example.com/v1/%2e%2e/admin',
      'https://api.example.com/v1/..%2fadmin',
      'https://api.example.com\\@evil.example/',
      'https://api.example.com:0/',
      'https://api.example.com:99999/',
      'https://api.example.com:80x/',
      'file:///etc/passwd',
      'gopher://api.example.com/',
      'ftp://api.example.com/',
      '//api.example.com/v1',
      'api.example.com/v1',
      '*',
      'https://api.example.com/v1\n',
      'https:///v1',
    ]) {
      expect(
        errorKindOf(() => scope(url)),
        url,
      ).toBe('InvalidScope');
    }
  });

  it('suffix, port, scheme, path-prefix and punycode look-alikes are not granted', () => {
    expect(held.grants(scope('https://api.example.com/v1/items'))).toBe(true);
    expect(held.grants(scope('https://API.EXAMPLE.COM./v1'))).toBe(true);
    for (const url of [
      'https://api.example.com.evil.example/v1',
      'https://evilapi.example.com/v1',
      'https://example.com/v1',
      'https://api.example.com:8443/v1',
      'http://api.example.com/v1',
      'https://api.example.com/v10',
      'https://api.example.com/v1/../admin',
      'https://api.example.com/',
      'https://xn--pi-8kc.example.com/v1', // punycode of the Cyrillic look-alike
    ]) {
      expect(held.grants(scope(url)), url).toBe(false);
    }
  });
});

describe('address policy', () => {
  it('classifies private, loopback, link-local, CGNAT, multicast, unspecified and IPv4-in-IPv6 forms', () => {
    for (const ip of [
      '127.0.0.1',
      '127.255.0.9',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      '::127.0.0.1',
      'fe80::1%lo0',
      'not-an-ip',
    ]) {
      expect(blockedAddressReason(ip), ip).toBeDefined();
    }
    for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) {
      expect(blockedAddressReason(ip), ip).toBeUndefined();
    }
    expect(blockedAddressReason('::ffff:127.0.0.1')).toMatch(/loopback \(IPv4 127\.0\.0\.1 inside IPv6\)/);
  });
});

describe('net.fetch', () => {
  it('fetches from 127.0.0.1 only when the held qualifier names 127.0.0.1:<port>', async () => {
    const o = await fetchOut({ url: `${base}/hello?x=1` });
    expect(o).toMatchObject({
      url: `${base}/hello?x=1`,
      status: 200,
      body: 'hello world',
      bytes: 11,
      truncated: false,
      headers: { 'x-test': 'yes' },
    });
    expect(seen.at(-1)).toMatchObject({ method: 'GET', url: '/hello?x=1', headers: { host: `127.0.0.1:${port}`, 'user-agent': 'aivyx' } });

    for (const held of [['net.fetch'], ['net.fetch:*'], [], [`net.post:${base}/`], [`net.fetch:http://127.0.0.1:${port + 1}/`]]) {
      const e = await aivyxFailure(fetchTool.run({ url: `${base}/hello` }, toolContext({ held })));
      expect(e, held.join()).toMatchObject({
        kind: 'CapabilityDenied',
        detail: { tool: 'net.fetch', host: '127.0.0.1', address: '127.0.0.1', reason: 'private-address' },
      });
      expect(e.hint).toContain(`net.fetch:http://127.0.0.1:${port}/`);
    }
  });

  it('HEAD returns status and headers without a body', async () => {
    expect(await fetchOut({ url: `${base}/hello`, method: 'HEAD' })).toMatchObject({ status: 200, body: '', bytes: 0 });
    expect(seen.at(-1)?.method).toBe('HEAD');
  });

  it('"localhost" is refused even under a qualifier naming it: a name never unlocks a loopback address', async () => {
    const url = `http://localhost:${port}/hello`;
    const e = await aivyxFailure(fetchTool.run({ url }, toolContext({ held: [`net.fetch:http://localhost:${port}/`, 'net.fetch'] })));
    expect(e).toMatchObject({ kind: 'CapabilityDenied', detail: { host: 'localhost', reason: 'private-address' } });
    expect(e.hint).toMatch(/never unlocks/);
  });

  it('a DNS name resolving to loopback (or any mix including it) is refused, and is resolved once', async () => {
    const calls: string[] = [];
    const answers: Record<string, string[]> = {
      'rebind.example': ['127.0.0.1'],
      'mixed.example': ['93.184.216.34', '127.0.0.1'],
      'mapped.example': ['::ffff:127.0.0.1'],
      'meta.example': ['169.254.169.254'],
      'v6.example': ['::1'],
    };
    const resolve: HostResolver = async (host) => {
      calls.push(host);
      return (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    };
    const tool = createNetFetchTool({ resolve });
    for (const host of Object.keys(answers)) {
      const url = `http://${host}:${port}/hello`;
      const e = await aivyxFailure(tool.run({ url }, toolContext({ held: [`net.fetch:http://${host}:${port}/`] })));
      expect(e, host).toMatchObject({ kind: 'CapabilityDenied', detail: { reason: 'private-address' } });
    }
    expect(calls).toEqual(Object.keys(answers));
    expect((await aivyxFailure(tool.run({ url: `http://nx.example:${port}/` }, toolContext({ held: ['net.fetch'] })))).message).toMatch(
      /cannot resolve nx\.example/,
    );
  });

  it("connects to the address resolved once (no second lookup, no rebinding), with Host naming the URL's host", async () => {
    let calls = 0;
    // A rebinding resolver: the first answer is the one checked; any later answer would differ.
    const resolve: HostResolver = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '10.9.9.9', family: 4 }];
    const policed: string[] = [];
    // Treat 127.0.0.1 as public here so a NAME can be fetched from the local test server.
    const tool = createNetFetchTool({
      resolve,
      addressPolicy: (a) => (policed.push(a), a === '127.0.0.1' ? undefined : blockedAddressReason(a)),
    });
    for (let i = 0; i < 2; i++) {
      calls = 0;
      const r = await tool.run({ url: `http://svc.example:${port}/hello` }, toolContext({ held: ['net.fetch'] }));
      expect(r).toMatchObject({ output: { status: 200, body: 'hello world' } });
      expect(calls).toBe(1);
      expect(seen.at(-1)?.headers.host).toBe(`svc.example:${port}`);
    }
    expect(policed).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('does not follow redirects: the 3xx comes back with its Location', async () => {
    const before = seen.filter((s) => s.url === '/secret').length;
    const o = await fetchOut({ url: `${base}/redirect` });
    expect(o).toMatchObject({ status: 302, location: '/secret', body: 'moved' });
    expect(seen.filter((s) => s.url === '/secret').length).toBe(before);
  });

  it('caps the body (maxBytes, default 1 MiB) and says truncated', async () => {
    expect(await fetchOut({ url: `${base}/big`, maxBytes: 1000 })).toMatchObject({ status: 200, bytes: 1000, truncated: true });
    const o = await fetchOut({ url: `${base}/big` });
    expect(o).toMatchObject({ bytes: 1024 * 1024, truncated: true });
    expect(o.body.length).toBe(1024 * 1024);
  });

  it('ends at the total timeout with a Timeout error', async () => {
    const t = Date.now();
    const e = await aivyxFailure(fetchTool.run({ url: `${base}/slow`, timeoutMs: 300 }, toolContext({ held: heldFetch() })));
    expect(e).toMatchObject({ kind: 'Timeout', detail: { tool: 'net.fetch' } });
    expect(Date.now() - t).toBeLessThan(5_000);
  });

  it('stops when the activity is cancelled', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('cancelled by test')), 200);
    await expect(fetchTool.run({ url: `${base}/slow` }, toolContext({ held: heldFetch(), signal: ac.signal }))).rejects.toThrow(
      'cancelled by test',
    );
  });

  it('reports a refused connection as a Tool error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const p = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const e = await aivyxFailure(
      fetchTool.run({ url: `http://127.0.0.1:${p}/` }, toolContext({ held: [`net.fetch:http://127.0.0.1:${p}/`] })),
    );
    expect(e).toMatchObject({ kind: 'Tool', detail: { tool: 'net.fetch' } });
    expect(e.message).toMatch(/connection refused/);
  });
});

describe('net.post', () => {
  it('sends method, body and content type with an Idempotency-Key stable across retries (Unverified)', async () => {
    const c = toolContext({ held: heldPost() });
    const input = { url: `${base}/echo`, method: 'PUT', body: '{"a":1}', contentType: 'application/json' };
    const r = await postTool.run(input, c);
    expect(r).toMatchObject({ kind: 'completed', verified: 'Unverified', output: { status: 201 } });
    const echoed = JSON.parse((r as { output: NetResponseOutput }).output.body) as Record<string, unknown>;
    expect(echoed).toEqual({ method: 'PUT', contentType: 'application/json', key: idempotencyKeyFor(c.idemKey), body: '{"a":1}' });
    expect(idempotencyKeyFor(c.idemKey)).toMatch(/^[0-9a-f]{64}$/);
    // A retry of the same activity (same idemKey) carries the same key; another call a different one.
    const again = JSON.parse(((await postTool.run(input, { ...c })) as { output: NetResponseOutput }).output.body) as Record<
      string,
      unknown
    >;
    expect(again.key).toBe(echoed.key);
    const other = JSON.parse(
      ((await postTool.run(input, toolContext({ held: heldPost() }))) as { output: NetResponseOutput }).output.body,
    ) as Record<string, unknown>;
    expect(other.key).not.toBe(echoed.key);
    for (const method of ['POST', 'PATCH', 'DELETE']) {
      expect(
        JSON.parse(
          ((await postTool.run({ url: `${base}/echo`, method }, toolContext({ held: heldPost() }))) as { output: NetResponseOutput }).output
            .body,
        ),
      ).toMatchObject({ method, contentType: null, body: '' });
    }
  });

  it('a net.fetch grant naming the address does not unlock net.post, nor does bare net.post', async () => {
    for (const held of [heldFetch(), ['net.post'], ['net.post:*']]) {
      expect((await aivyxFailure(postTool.run({ url: `${base}/echo`, method: 'POST' }, toolContext({ held })))).kind).toBe(
        'CapabilityDenied',
      );
    }
  });

  it('does not follow redirects either', async () => {
    const r = await postTool.run({ url: `${base}/redirect`, method: 'POST', body: 'x' }, toolContext({ held: heldPost() }));
    expect(r).toMatchObject({ output: { status: 302, location: '/secret' } });
  });
});
