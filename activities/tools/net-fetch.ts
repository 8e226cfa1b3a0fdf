/**
 * `net.fetch` (GET/HEAD) and the HTTP machinery `net.post` shares, on undici.
 *
 * SSRF policy: the host is resolved ONCE, before connecting; if any address it resolves to is
 * private, loopback, link-local, CGNAT, multicast, unspecified or reserved (IPv4-mapped and
 * other IPv4-embedding IPv6 forms are unwrapped first), the call is refused — unless the held
 * capabilities name that address itself as an IPv4 literal host (`net.fetch:http://127.0.0.1:8080/api`).
 * A host NAME never unlocks a private address, not even `localhost`: what a name resolves to is
 * outside the grant (DNS changes, /etc/hosts, rebinding), so the grant must pin the address.
 * The connection goes to the checked address (a custom `lookup` that never asks DNS again, so
 * there is no rebinding window); Host and TLS SNI stay the URL's name. Redirects are never
 * followed: a 3xx is returned with its Location, and asking for it is a new call with a new scope
 * check. Response bodies are capped (default 1 MiB) and the whole exchange has one deadline.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIPv4, isIPv6, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { Scope } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import {
  canonicalUrlParts,
  NET_DEFAULT_MAX_BYTES,
  NET_DEFAULT_TIMEOUT_MS,
  netFetchTool,
  type CanonicalUrlParts,
} from '../../core/tools/net-tools.js';
import { implementTool, type ToolImplementation, type ToolRunContext } from './tool-implementation.js';

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses (default: the system resolver, `dns.lookup` all). */
export type HostResolver = (host: string) => Promise<ResolvedAddress[]>;

/** Ports of the network tools. */
export interface NetToolDeps {
  /** Name resolution (tests inject names that resolve to loopback). Called once per request. */
  resolve?: HostResolver;
  /**
   * Why an address is refused without a grant naming it (default {@link blockedAddressReason}).
   * Wiring code only, never model input; tests use it to exercise pinning with names.
   */
  addressPolicy?: (address: string) => string | undefined;
}

/** Output of `net.fetch` and `net.post`. `location` is the raw Location header of a 3xx (never followed). */
export interface NetResponseOutput {
  url: string;
  status: number;
  headers: Record<string, string>;
  location?: string;
  body: string;
  bytes: number;
  truncated: boolean;
}

const systemResolve: HostResolver = async (host) => {
  const all = await dnsLookup(host, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

const BLOCKED_V4: ReadonlyArray<[string, number, string]> = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved (incl. broadcast)'],
];
const BLOCKED_V6: ReadonlyArray<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'IPv4-compatible (deprecated)'],
  ['100::', 64, 'discard-only'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local (deprecated)'],
  ['ff00::', 8, 'multicast'],
];

function blockList(rules: ReadonlyArray<[string, number, string]>, type: 'ipv4' | 'ipv6'): Array<[BlockList, string]> {
  return rules.map(([net, prefix, why]) => {
    const b = new BlockList();
    b.addSubnet(net, prefix, type);
    return [b, why];
  });
}
const V4_RULES = blockList(BLOCKED_V4, 'ipv4');
const V6_RULES = blockList(BLOCKED_V6, 'ipv6');

/** Expands an IPv6 address to its eight 16-bit groups (input must satisfy `isIPv6`). */
function ipv6Groups(ip: string): number[] {
  let s = ip.toLowerCase();
  const pct = s.indexOf('%');
  if (pct >= 0) s = s.slice(0, pct);
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    s = s.slice(0, quad.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const t = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16));
}

function v4FromGroups(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/**
 * Why `ip` must not be reached without a grant naming it, or undefined for a public address.
 * IPv6 forms that embed an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) are judged by the embedded address. Anything unparseable is refused.
 */
export function blockedAddressReason(ip: string): string | undefined {
  if (isIPv4(ip)) {
    for (const [b, why] of V4_RULES) if (b.check(ip, 'ipv4')) return why;
    return undefined;
  }
  if (!isIPv6(ip)) return 'not an IP address';
  const g = ipv6Groups(ip);
  if (g.length !== 8 || g.some((x) => !Number.isInteger(x))) return 'not an IP address';
  const embedded =
    g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff
      ? v4FromGroups(g[6] as number, g[7] as number) // IPv4-mapped
      : g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)
        ? v4FromGroups(g[6] as number, g[7] as number) // NAT64
        : g[0] === 0x2002
          ? v4FromGroups(g[1] as number, g[2] as number) // 6to4
          : undefined;
  if (embedded !== undefined) {
    const why = blockedAddressReason(embedded);
    return why === undefined ? undefined : `${why} (IPv4 ${embedded} inside IPv6)`;
  }
  for (const [b, why] of V6_RULES) if (b.check(ip, 'ipv6')) return why;
  return undefined;
}

/**
 * True when the held capabilities name this exact IPv4 host in a URL qualifier of `base` that
 * grants `needed` — the only way a private address is allowed. Bare `net.fetch` and `net.fetch:*`
 * never do.
 */
export function grantNamesPrivateHost(base: string, needed: string, parts: CanonicalUrlParts, held: readonly string[]): boolean {
  if (!parts.ipv4) return false;
  const n = Scope.parse(needed);
  return held.some((h) => {
    const s = Scope.tryParse(h);
    return s !== undefined && s.base === base && s.qualifier !== undefined && s.qualifier !== '*' && n.isGrantedBy(s);
  });
}

function netError(
  tool: string,
  kind: 'Tool' | 'CapabilityDenied' | 'Timeout',
  message: string,
  options: { cause?: unknown; hint?: string; detail?: Record<string, unknown> } = {},
): AivyxError {
  const { detail, ...rest } = options;
  return new AivyxError(kind, `${tool}: ${message}`, { detail: { tool, ...detail }, ...rest });
}

/** What one HTTP exchange needs. */
export interface HttpExchange {
  tool: 'net.fetch' | 'net.post';
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  maxBytes: number;
  timeoutMs: number;
}

/** Picks and checks the one address the request connects to. */
async function pinAddress(
  ex: HttpExchange,
  parts: CanonicalUrlParts,
  ctx: ToolRunContext,
  resolve: HostResolver,
  policy: (address: string) => string | undefined,
): Promise<ResolvedAddress> {
  let addrs: ResolvedAddress[];
  if (parts.ipv4) addrs = [{ address: parts.host, family: 4 }];
  else {
    try {
      addrs = await resolve(parts.host);
    } catch (e) {
      throw netError(ex.tool, 'Tool', `cannot resolve ${parts.host}: ${(e as Error).message}`, { cause: e });
    }
    if (addrs.length === 0) throw netError(ex.tool, 'Tool', `cannot resolve ${parts.host}: no addresses`);
  }
  const needed = `${ex.tool}:${ex.url}`;
  // Every address is judged, not just the one used: a name answering both a public and a private
  // address is refused rather than raced.
  for (const a of addrs) {
    const why = policy(a.address);
    if (why !== undefined && !grantNamesPrivateHost(ex.tool, needed, parts, ctx.held)) {
      throw netError(ex.tool, 'CapabilityDenied', `${parts.host} resolves to ${a.address}, a ${why} address`, {
        hint: parts.ipv4
          ? `private addresses need a grant naming this address, e.g. ${ex.tool}:${parts.scheme}://${parts.host}${parts.port === (parts.scheme === 'https' ? 443 : 80) ? '' : `:${parts.port}`}/`
          : `a host name never unlocks a private address; grant and request the IP itself (e.g. ${ex.tool}:${parts.scheme}://${a.family === 4 ? a.address : '<ipv4>'}:${parts.port}/)`,
        detail: { host: parts.host, address: a.address, reason: 'private-address' },
      });
    }
  }
  return addrs[0] as ResolvedAddress;
}

function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Drops a trailing incomplete UTF-8 sequence so a cut body does not end in U+FFFD. */
function utf8Boundary(buf: Buffer): Buffer {
  let i = buf.length;
  while (i > 0 && buf.length - i < 3 && ((buf[i - 1] as number) & 0xc0) === 0x80) i--;
  if (i === 0) return buf;
  const lead = buf[i - 1] as number;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return buf.length - (i - 1) >= need ? buf : buf.subarray(0, i - 1);
}

/** Performs one HTTP exchange under the SSRF policy, cap and deadline above. */
export async function httpExchange(ex: HttpExchange, ctx: ToolRunContext, deps: NetToolDeps = {}): Promise<NetResponseOutput> {
  ctx.signal.throwIfAborted();
  const parts = canonicalUrlParts(ex.url);
  const deadline = AbortSignal.timeout(ex.timeoutMs);
  const signal = AbortSignal.any([ctx.signal, deadline]);
  const timedOut = (): AivyxError =>
    netError(ex.tool, 'Timeout', `no complete response from ${parts.host} within ${ex.timeoutMs} ms`, {
      hint: 'try again later or ask for a longer timeoutMs',
    });
  const pinned = await pinAddress(ex, parts, ctx, deps.resolve ?? systemResolve, deps.addressPolicy ?? blockedAddressReason);
  if (deadline.aborted) throw timedOut();
  // Connect to the checked address only: this lookup never consults DNS.
  const lookup: LookupFunction = (_host, options, cb) => {
    if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
  const agent = new Agent({ connect: { lookup, timeout: ex.timeoutMs }, connections: 1, keepAliveTimeout: 1 });
  try {
    const res = await request(ex.url, {
      dispatcher: agent,
      method: ex.method as 'GET',
      headers: { 'user-agent': 'aivyx', ...ex.headers },
      ...(ex.body === undefined ? {} : { body: ex.body }),
      signal,
    });
    const chunks: Buffer[] = [];
    let total = 0;
    let truncated = false;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        const room = ex.maxBytes - total;
        if (chunk.length > room) {
          if (room > 0) chunks.push(chunk.subarray(0, room));
          total += Math.max(room, 0);
          truncated = true;
          break;
        }
        chunks.push(chunk);
        total += chunk.length;
        ctx.heartbeat();
      }
    } finally {
      if (truncated) res.body.destroy();
    }
    const raw = Buffer.concat(chunks);
    const kept = truncated ? utf8Boundary(raw) : raw;
    const headers = flatHeaders(res.headers);
    const out: NetResponseOutput = {
      url: ex.url,
      status: res.statusCode,
      headers,
      body: kept.toString('utf8'),
      bytes: kept.length,
      truncated,
    };
    if (res.statusCode >= 300 && res.statusCode < 400 && headers.location !== undefined) out.location = headers.location;
    return out;
  } catch (e) {
    if (e instanceof AivyxError) throw e;
    if (ctx.signal.aborted) throw ctx.signal.reason ?? e;
    if (deadline.aborted) throw timedOut();
    const code = (e as { code?: string }).code;
    throw netError(
      ex.tool,
      'Tool',
      `${ex.method} ${ex.url} failed: ${code === 'ECONNREFUSED' ? 'connection refused' : (e as Error).message}`,
      { cause: e, ...(code === undefined ? {} : { detail: { code } }) },
    );
  } finally {
    agent.destroy().catch(() => undefined);
  }
}

/** Creates the `net.fetch` implementation (GET/HEAD have no effect to verify: NotApplicable). */
export function createNetFetchTool(deps: NetToolDeps = {}): ToolImplementation {
  return implementTool(netFetchTool, {
    // The canonical URL is already what the scope names; the address check happens at connect time.
    resolveScope: async (input) => `net.fetch:${input.url}`,
    async run(req, ctx) {
      const output = await httpExchange(
        {
          tool: 'net.fetch',
          url: req.url,
          method: req.method,
          headers: req.headers,
          maxBytes: req.maxBytes ?? NET_DEFAULT_MAX_BYTES,
          timeoutMs: req.timeoutMs ?? NET_DEFAULT_TIMEOUT_MS,
        },
        ctx,
        deps,
      );
      return { kind: 'completed', output, verified: 'NotApplicable' };
    },
  });
}
