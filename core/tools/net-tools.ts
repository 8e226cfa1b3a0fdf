/**
 * `net.fetch` and `net.post` as the core knows them: input validation, model-facing schemas and the
 * scope each call needs. Pure and deterministic (workflow-safe, no Node imports).
 *
 * The URL of a call is canonicalized by the capability layer's own strict URL parser
 * (`canonicalUrlQualifier`), so the scope a call needs is exactly the form `urlGrants` compares:
 * userinfo, IP-literal and ambiguous numeric hosts, non-ASCII (IDN) hosts, encoded dots and slashes,
 * control characters and non-http(s) schemes are refused here, before anything is scheduled.
 * There is no second URL parser: the activity splits the canonical string (see {@link canonicalUrlParts}).
 */
import { utf8Length } from '../limits.js';
import { z } from 'zod';
import { invalid } from './tool-input.js';
import { defineTool } from './define-tool.js';
import { positiveIntField, says } from './fields.js';
import { canonicalUrlQualifier } from '../capability/qualifier.js';
import { AivyxError } from '../errors.js';

export type NetFetchMethod = 'GET' | 'HEAD';
export type NetPostMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Validated input of `net.fetch`; `url` is canonical. */
export interface NetFetchInput {
  url: string;
  method: NetFetchMethod;
  headers: Record<string, string>;
  maxBytes?: number;
  timeoutMs?: number;
}

/** Validated input of `net.post`; `url` is canonical. */
export interface NetPostInput {
  url: string;
  method: NetPostMethod;
  body?: string;
  contentType?: string;
  headers: Record<string, string>;
}

/** Default response-body cap of both tools (1 MiB). */
export const NET_DEFAULT_MAX_BYTES = 1024 * 1024;
/** Largest `maxBytes` a `net.fetch` call may ask for (8 MiB). */
export const NET_MAX_BYTES = 8 * 1024 * 1024;
/** Default total time of one request, connect to last body byte (15 s). */
export const NET_DEFAULT_TIMEOUT_MS = 15_000;
/** Longest `timeoutMs` a call may ask for (60 s). */
export const NET_MAX_TIMEOUT_MS = 60_000;
/** Largest request body `net.post` sends (1 MiB, counted in UTF-8 bytes). */
export const NET_MAX_BODY_BYTES = 1024 * 1024;
const MAX_HEADERS = 32;
const MAX_HEADER_VALUE = 8192;

/**
 * Request headers a call may not set: framing and hop-by-hop headers (request smuggling), `Host`
 * (the connection is pinned to the URL's host), proxy credentials, and `Idempotency-Key` (net.post
 * derives it from the activity's idempotency key).
 */
export const NET_FORBIDDEN_HEADERS: readonly string[] = Object.freeze([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
  'idempotency-key',
]);

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Header values: visible ASCII, space and tab; no CR/LF (header injection) and no other controls.
const HEADER_VALUE = /^[\t\x20-\x7e]*$/;
const CONTENT_TYPE =
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+=("[\x20-\x21\x23-\x7e]*"|[!#$%&'*+.^_`|~0-9A-Za-z-]+))*$/;

/** UTF-8 byte length without Node's Buffer (workflow-safe). */
/**
 * The canonical form of a call's URL (what its scope names); throws AivyxError(InvalidScope).
 * `*` is a qualifier, not a URL, so it is refused as an input.
 */
export function canonicalRequestUrl(tool: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalid(tool, '"url" must be a non-empty string');
  if (value === '*') throw invalid(tool, '"url" must be an http(s) URL', 'name the URL to request, e.g. https://api.example.com/v1/items');
  try {
    return canonicalUrlQualifier(value);
  } catch (cause) {
    if (cause instanceof AivyxError)
      throw new AivyxError('InvalidScope', `${tool}: ${cause.message.replace(/^URL qualifier/, 'URL')}`, {
        detail: { tool },
        ...(cause.hint === undefined ? {} : { hint: cause.hint }),
        cause,
      });
    throw cause;
  }
}

/** The pieces of a CANONICAL url (output of {@link canonicalRequestUrl}); not a parser for anything else. */
export interface CanonicalUrlParts {
  scheme: 'http' | 'https';
  host: string;
  /** Explicit port number (the scheme default when the canonical form has none). */
  port: number;
  /** Path plus `?query` when there is one. */
  pathAndQuery: string;
  /** True when the host is a dotted-quad IPv4 literal. */
  ipv4: boolean;
}

const CANONICAL_URL = /^(https?):\/\/([a-z0-9.-]+)(?::([0-9]{1,5}))?(\/[^?#]*(?:\?[^#]*)?)$/;

/** Splits a canonical URL; throws AivyxError(Internal) when given anything that is not canonical. */
export function canonicalUrlParts(canonical: string): CanonicalUrlParts {
  const m = CANONICAL_URL.exec(canonical);
  if (!m || canonicalUrlQualifier(canonical) !== canonical)
    throw new AivyxError('Internal', `not a canonical URL: ${JSON.stringify(canonical)}`);
  const scheme = m[1] as 'http' | 'https';
  const host = m[2] as string;
  return {
    scheme,
    host,
    port: m[3] === undefined ? (scheme === 'https' ? 443 : 80) : Number(m[3]),
    pathAndQuery: m[4] as string,
    ipv4: /^[0-9]+(\.[0-9]+){3}$/.test(host),
  };
}

function headers(tool: string, value: unknown): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(tool, '"headers" must be an object of header name to string value');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) throw invalid(tool, `at most ${MAX_HEADERS} headers`);
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, v] of entries) {
    if (!TOKEN.test(name)) throw invalid(tool, `invalid header name ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    if (NET_FORBIDDEN_HEADERS.includes(lower))
      throw invalid(
        tool,
        `header "${name}" cannot be set`,
        `the tool sets framing, Host and Idempotency-Key itself; refused: ${NET_FORBIDDEN_HEADERS.join(', ')}`,
      );
    if (seen.has(lower)) throw invalid(tool, `header "${name}" given twice`);
    seen.add(lower);
    if (typeof v !== 'string' || !HEADER_VALUE.test(v) || v.length > MAX_HEADER_VALUE)
      throw invalid(
        tool,
        `header "${name}" must be a printable ASCII string of at most ${MAX_HEADER_VALUE} characters`,
        'no newlines or control characters in header values',
      );
    out[name] = v;
  }
  return out;
}

const headersField = () =>
  z
    .record(z.string(), z.string({ error: says('"headers" must be an object of header name to string value') }), {
      error: says('"headers" must be an object of header name to string value'),
    })
    .describe('Extra request headers (no Host, framing or Idempotency-Key).')
    .optional();
const urlField = () => z.string({ error: says('"url" must be a non-empty string') }).describe('Absolute http(s) URL, no user@ part.');

/** `net.fetch`: one GET or HEAD; redirects are returned, not followed. */
export const netFetchTool = defineTool({
  id: 'net.fetch',
  summary: 'HTTP GET or HEAD one URL',
  description:
    'HTTP GET or HEAD one URL. Redirects are not followed: a 3xx comes back with its location so you can decide to request it. Private and loopback addresses are refused unless the grant names that IP. Returns {url, status, headers, location?, body, bytes, truncated}; body is UTF-8 text cut at maxBytes (default 1 MiB).',
  input: () =>
    z.strictObject({
      url: urlField(),
      method: z
        .enum(['GET', 'HEAD'], { error: says('"method" must be "GET" or "HEAD"', 'use net.post for POST, PUT, PATCH and DELETE') })
        .default('GET'),
      headers: headersField(),
      maxBytes: positiveIntField(
        'maxBytes',
        NET_MAX_BYTES,
        `Cut the body at this many bytes (default ${NET_DEFAULT_MAX_BYTES}).`,
      ).optional(),
      timeoutMs: positiveIntField(
        'timeoutMs',
        NET_MAX_TIMEOUT_MS,
        `Total time of the request (default ${NET_DEFAULT_TIMEOUT_MS}).`,
      ).optional(),
    }),
  canonical: (i): NetFetchInput => {
    const tool = 'net.fetch';
    const out: NetFetchInput = { url: canonicalRequestUrl(tool, i.url), method: i.method, headers: headers(tool, i.headers) };
    if (Object.keys(out.headers).some((h) => h.toLowerCase() === 'content-type'))
      throw invalid(tool, 'a GET or HEAD request has no body, so no Content-Type');
    if (i.maxBytes !== undefined) out.maxBytes = i.maxBytes;
    if (i.timeoutMs !== undefined) out.timeoutMs = i.timeoutMs;
    return out;
  },
  scope: { base: 'net.fetch', qualifier: (i) => i.url },
  idempotency: 'natural',
  // A web page is written by whoever controls the site; the URL itself is where a request goes. The
  // method may hold anything the schema allows: GET and HEAD are both safe methods (RFC 9110), a HEAD
  // asks for less than the GET would, and anything that changes the server's state is net.post's.
  provenance: { output: 'untrusted', effect: false, egressFields: ['url'], contentFields: ['method', 'maxBytes', 'timeoutMs'] },
});

/** `net.post`: one POST/PUT/PATCH/DELETE, sent with an Idempotency-Key stable across retries. */
export const netPostTool = defineTool({
  id: 'net.post',
  description:
    'HTTP POST, PUT, PATCH or DELETE to one URL with an optional text body. Sent with an Idempotency-Key header that stays the same if the call is retried. Redirects are not followed. Returns {url, status, headers, location?, body, bytes, truncated}.',
  input: () =>
    z.strictObject({
      url: urlField(),
      method: z.enum(['POST', 'PUT', 'PATCH', 'DELETE'], {
        error: says('"method" must be "POST", "PUT", "PATCH" or "DELETE"', 'use net.fetch for GET and HEAD'),
      }),
      body: z
        .string({ error: says('"body" must be a string') })
        .describe('Request body (UTF-8 text, at most 1 MiB).')
        .optional(),
      contentType: z
        .string({ error: says('"contentType" must be a media type, e.g. application/json') })
        .describe('Media type of the body, e.g. application/json.')
        .optional(),
      headers: headersField(),
    }),
  canonical: (i): NetPostInput => {
    const tool = 'net.post';
    const out: NetPostInput = { url: canonicalRequestUrl(tool, i.url), method: i.method, headers: headers(tool, i.headers) };
    if (Object.keys(out.headers).some((h) => h.toLowerCase() === 'content-type'))
      throw invalid(tool, 'set the content type with "contentType", not a header');
    if (i.body !== undefined) {
      if (utf8Length(i.body) > NET_MAX_BODY_BYTES) throw invalid(tool, `"body" is larger than ${NET_MAX_BODY_BYTES} bytes`);
      out.body = i.body;
    }
    if (i.contentType !== undefined) {
      if (!CONTENT_TYPE.test(i.contentType)) throw invalid(tool, '"contentType" must be a media type, e.g. application/json');
      if (out.body === undefined) throw invalid(tool, '"contentType" without a "body"');
      out.contentType = i.contentType;
    }
    return out;
  },
  scope: { base: 'net.post', qualifier: (i) => i.url },
  idempotency: 'keyed',
  confirmFirst: true,
  // The method is what the request does to the URL: a POST the owner asked for must not become a DELETE.
  provenance: { output: 'untrusted', effect: true, egressFields: ['url'], contentFields: ['body', 'contentType'] },
});

export const parseNetFetchInput = netFetchTool.parse;
export const parseNetPostInput = netPostTool.parse;
