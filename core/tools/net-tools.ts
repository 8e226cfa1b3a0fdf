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
import { asRecord, invalid, positiveInt } from './tool-input.js';
import { canonicalUrlQualifier } from '../capability/qualifier.js';
import { AivyxError } from '../errors.js';
import type { ToolDescriptor } from '../tools.js';

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
const CONTENT_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;\s*[!#$%&'*+.^_`|~0-9A-Za-z-]+=("[\x20-\x21\x23-\x7e]*"|[!#$%&'*+.^_`|~0-9A-Za-z-]+))*$/;

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
    if (cause instanceof AivyxError) throw new AivyxError('InvalidScope', `${tool}: ${cause.message.replace(/^URL qualifier/, 'URL')}`, { detail: { tool }, ...(cause.hint === undefined ? {} : { hint: cause.hint }), cause });
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
  if (!m || canonicalUrlQualifier(canonical) !== canonical) throw new AivyxError('Internal', `not a canonical URL: ${JSON.stringify(canonical)}`);
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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(tool, '"headers" must be an object of header name to string value');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) throw invalid(tool, `at most ${MAX_HEADERS} headers`);
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const [name, v] of entries) {
    if (!TOKEN.test(name)) throw invalid(tool, `invalid header name ${JSON.stringify(name)}`);
    const lower = name.toLowerCase();
    if (NET_FORBIDDEN_HEADERS.includes(lower)) throw invalid(tool, `header "${name}" cannot be set`, `the tool sets framing, Host and Idempotency-Key itself; refused: ${NET_FORBIDDEN_HEADERS.join(', ')}`);
    if (seen.has(lower)) throw invalid(tool, `header "${name}" given twice`);
    seen.add(lower);
    if (typeof v !== 'string' || !HEADER_VALUE.test(v) || v.length > MAX_HEADER_VALUE) throw invalid(tool, `header "${name}" must be a printable ASCII string of at most ${MAX_HEADER_VALUE} characters`, 'no newlines or control characters in header values');
    out[name] = v;
  }
  return out;
}

/** Validates and canonicalizes a `net.fetch` input; throws AivyxError(InvalidScope). */
export function parseNetFetchInput(input: unknown): NetFetchInput {
  const tool = 'net.fetch';
  const rec = asRecord(tool, input, ['url', 'method', 'headers', 'maxBytes', 'timeoutMs']);
  const url = canonicalRequestUrl(tool, rec.url);
  const method = rec.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') throw invalid(tool, '"method" must be "GET" or "HEAD"', 'use net.post for POST, PUT, PATCH and DELETE');
  const out: NetFetchInput = { url, method, headers: headers(tool, rec.headers) };
  if (Object.keys(out.headers).some((h) => h.toLowerCase() === 'content-type')) throw invalid(tool, 'a GET or HEAD request has no body, so no Content-Type');
  if (rec.maxBytes !== undefined) out.maxBytes = positiveInt(tool, 'maxBytes', rec.maxBytes, NET_MAX_BYTES);
  if (rec.timeoutMs !== undefined) out.timeoutMs = positiveInt(tool, 'timeoutMs', rec.timeoutMs, NET_MAX_TIMEOUT_MS);
  return out;
}

/** Validates and canonicalizes a `net.post` input; throws AivyxError(InvalidScope). */
export function parseNetPostInput(input: unknown): NetPostInput {
  const tool = 'net.post';
  const rec = asRecord(tool, input, ['url', 'method', 'body', 'contentType', 'headers']);
  const url = canonicalRequestUrl(tool, rec.url);
  const method = rec.method;
  if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH' && method !== 'DELETE') throw invalid(tool, '"method" must be "POST", "PUT", "PATCH" or "DELETE"', 'use net.fetch for GET and HEAD');
  const out: NetPostInput = { url, method, headers: headers(tool, rec.headers) };
  if (Object.keys(out.headers).some((h) => h.toLowerCase() === 'content-type')) throw invalid(tool, 'set the content type with "contentType", not a header');
  if (rec.body !== undefined) {
    if (typeof rec.body !== 'string') throw invalid(tool, '"body" must be a string');
    if (utf8Length(rec.body) > NET_MAX_BODY_BYTES) throw invalid(tool, `"body" is larger than ${NET_MAX_BODY_BYTES} bytes`);
    out.body = rec.body;
  }
  if (rec.contentType !== undefined) {
    if (typeof rec.contentType !== 'string' || !CONTENT_TYPE.test(rec.contentType)) throw invalid(tool, '"contentType" must be a media type, e.g. application/json');
    if (out.body === undefined) throw invalid(tool, '"contentType" without a "body"');
    out.contentType = rec.contentType;
  }
  return out;
}

const HEADERS_SCHEMA = { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra request headers (no Host, framing or Idempotency-Key).' };

/** `net.fetch`: one GET or HEAD; redirects are returned, not followed. */
export const netFetchTool: ToolDescriptor = {
  id: 'net.fetch',
  description:
    'HTTP GET or HEAD one URL. Redirects are not followed: a 3xx comes back with its location so you can decide to request it. Private and loopback addresses are refused unless the grant names that IP. Returns {url, status, headers, location?, body, bytes, truncated}; body is UTF-8 text cut at maxBytes (default 1 MiB).',
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'Absolute http(s) URL, no user@ part.' },
      method: { type: 'string', enum: ['GET', 'HEAD'], default: 'GET' },
      headers: HEADERS_SCHEMA,
      maxBytes: { type: 'integer', minimum: 1, maximum: NET_MAX_BYTES, default: NET_DEFAULT_MAX_BYTES },
      timeoutMs: { type: 'integer', minimum: 1, maximum: NET_MAX_TIMEOUT_MS, default: NET_DEFAULT_TIMEOUT_MS },
    },
    required: ['url'],
    additionalProperties: false,
  },
  requiredScope: (input) => `net.fetch:${parseNetFetchInput(input).url}`,
  idempotency: 'natural',
};

/** `net.post`: one POST/PUT/PATCH/DELETE, sent with an Idempotency-Key stable across retries. */
export const netPostTool: ToolDescriptor = {
  id: 'net.post',
  description:
    'HTTP POST, PUT, PATCH or DELETE to one URL with an optional text body. Sent with an Idempotency-Key header that stays the same if the call is retried. Redirects are not followed. Returns {url, status, headers, location?, body, bytes, truncated}.',
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'Absolute http(s) URL, no user@ part.' },
      method: { type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE'] },
      body: { type: 'string', description: 'Request body (UTF-8 text, at most 1 MiB).' },
      contentType: { type: 'string', description: 'Media type of the body, e.g. application/json.' },
      headers: HEADERS_SCHEMA,
    },
    required: ['url', 'method'],
    additionalProperties: false,
  },
  requiredScope: (input) => `net.post:${parseNetPostInput(input).url}`,
  idempotency: 'keyed',
};

/** The network tools, in the order the model is shown them. */
export const NET_TOOLS: readonly ToolDescriptor[] = Object.freeze([netFetchTool, netPostTool]);
