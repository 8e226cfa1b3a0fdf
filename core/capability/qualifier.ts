/**
 * Qualifier canonicalization and matching, one pair of functions per qualifier kind.
 *
 * Decision (stricter than the seed, which sniffs the qualifier's shape): the KIND of a
 * qualifier is fixed by the scope base (see `qualifierKindOf` in scope.ts), so
 * `fs.read:https://x` is a malformed path, never a URL prefix, and no attacker-chosen
 * qualifier can pick a laxer matcher.
 *
 * Every qualifier is stored in canonical form, so matching compares canonical strings.
 * Each `*Grants(needed, held)` is sound (it only says yes when every concrete request
 * `needed` can stand for is also allowed by `held`) and transitive, which is what makes
 * `CapabilitySet.intersect` sound.
 *
 * The "any qualifier" form of each kind is a real qualifier, see {@link ANY_QUALIFIER}: it
 * grants every qualified request of its base and, being a qualifier, never satisfies a bare
 * request (rule 4). It is NOT what a ▲ ceiling entry means: those hold only the qualifiers the
 * operator configured (tier-policy.ts), which may never be this form.
 */
import { AivyxError } from '../errors.js';
import { checkPosixPath, pathSegments } from '../path.js';

/** How a base's qualifier is read: fixed per base, never guessed from the qualifier. */
export type QualifierKind = 'path' | 'url' | 'domain' | 'allowlist' | 'glob';

/**
 * The qualifier that grants any qualified request of its kind: `/**` for paths, `*` for URLs,
 * domains and simple globs. Allowlists have none: a command allowlist must name its commands.
 * A tier policy refuses it (a ▲ entry never means everything).
 */
export const ANY_QUALIFIER: Readonly<Record<QualifierKind, string | undefined>> = Object.freeze({
  path: '/**',
  url: '*',
  domain: '*',
  allowlist: undefined,
  glob: '*',
});

function bad(message: string, hint: string): AivyxError {
  return new AivyxError('InvalidScope', message, { hint });
}

// Control characters (C0, DEL, C1) are never meaningful in a qualifier and hide in logs.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
// `%` followed by two hex digits: a percent-escape a consumer might decode after our check.
const PERCENT_ESCAPE = /%[0-9a-fA-F]{2}/;

function describeChar(c: string): string {
  if (c === '\n') return 'a newline';
  if (c === '\r') return 'a carriage return';
  if (c === '\t') return 'a tab';
  const code = c.codePointAt(0) ?? 0;
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return `control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  if (c === ' ') return 'a space';
  return `"${c}"`;
}

// ---------------------------------------------------------------- path glob

const PATH_GLOB_CHARS = /[*?]/;

/**
 * Canonical path glob: absolute, lexically normalized, runs of `**` collapsed.
 * Refuses NUL/control chars, backslashes, `~`, percent-escapes (a consumer might decode
 * `%2e%2e` into `..` after this check), `**` inside a segment, and `..` after a glob.
 */
export function canonicalPathQualifier(raw: string): string {
  const ctl = CONTROL.exec(raw);
  if (ctl) throw bad(`path qualifier contains ${describeChar(ctl[0])}`, 'remove control characters from the path');
  if (raw.includes('\\'))
    throw bad(
      `path qualifier ${JSON.stringify(raw)} contains a backslash`,
      'use POSIX "/" separators; backslashes are refused so no consumer can read them as separators',
    );
  if (raw.includes('~'))
    throw bad(
      `path qualifier ${JSON.stringify(raw)} contains "~"`,
      'write the home directory out in full (e.g. /home/you/...); "~" is never expanded',
    );
  if (PERCENT_ESCAPE.test(raw))
    throw bad(
      `path qualifier ${JSON.stringify(raw)} contains a percent-escape`,
      'write the characters literally; percent-encoding (e.g. %2e, %2f) is refused in paths',
    );
  if (!raw.startsWith('/'))
    throw bad(`path qualifier ${JSON.stringify(raw)} is not an absolute path`, 'start the path with / (e.g. fs.read:/home/you/**)');
  let sawGlob = false;
  for (const seg of raw.split('/')) {
    if (seg.includes('**') && seg !== '**')
      throw bad(`path qualifier ${JSON.stringify(raw)}: "**" must be a whole segment`, 'write /a/**/b, not /a/x**');
    if (seg === '..' && sawGlob)
      throw bad(
        `path qualifier ${JSON.stringify(raw)} has ".." after a wildcard`,
        'remove the ".." segment; it cannot be resolved after a wildcard',
      );
    if (PATH_GLOB_CHARS.test(seg)) sawGlob = true;
  }
  const norm = checkPosixPath(raw);
  if (!norm.ok) throw bad(`path qualifier: ${norm.message}`, norm.hint);
  const segs: string[] = [];
  for (const seg of pathSegments(norm.path)) if (!(seg === '**' && segs[segs.length - 1] === '**')) segs.push(seg);
  return '/' + segs.join('/');
}

// Held qualifiers come from a handful of capability sets, so compiled patterns are cached:
// every tool call is checked twice and the check must stay cheap (bench: scope checks/s).
const segmentRegexes = new Map<string, RegExp>();
const CACHE_LIMIT = 4096;

function cached(cache: Map<string, RegExp>, key: string, build: () => RegExp): RegExp {
  let re = cache.get(key);
  if (re === undefined) {
    if (cache.size >= CACHE_LIMIT) cache.clear();
    re = build();
    cache.set(key, re);
  }
  return re;
}

function segmentMatches(pattern: string, seg: string): boolean {
  if (!PATH_GLOB_CHARS.test(pattern)) return pattern === seg;
  return cached(segmentRegexes, pattern, () => {
    const body = [...pattern].map((c) => (c === '*' ? '[^/]*' : c === '?' ? '[^/]' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('');
    return new RegExp(`^${body}$`, 'u');
  }).test(seg);
}

/** True when the concrete segment list `s` is matched by the glob segment list `p`. */
function matchSegments(p: readonly string[], s: readonly string[]): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (s.length + 1) + j;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    let r: boolean;
    if (i === p.length) r = j === s.length;
    else if (p[i] === '**') r = go(i + 1, j) || (j < s.length && go(i, j + 1));
    else r = j < s.length && segmentMatches(p[i] as string, s[j] as string) && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

/** The literal segments L of a held `L/**` glob (no wildcard anywhere in L), else undefined. */
function literalDeepPrefix(segs: readonly string[], isGlob: (seg: string) => boolean): readonly string[] | undefined {
  if (segs[segs.length - 1] !== '**') return undefined;
  const prefix = segs.slice(0, -1);
  return prefix.some(isGlob) ? undefined : prefix;
}

/** Options of {@link pathGrants}. */
export interface PathGrantOptions {
  /**
   * A trailing `**` never matches its own root: `/x/**` grants what lies under `/x` but not
   * `/x` itself (used for `fs.delete`, where deleting the root deletes everything the grant covers).
   */
  rootExcluded?: boolean;
}

/**
 * Path attenuation. A concrete needed path is granted when the held glob matches it
 * (`*`/`?` within one segment, `**` any depth including none, unless `rootExcluded`). A held
 * plain path grants exactly itself: `/a/b` does NOT grant `/a/b/c` (hold `/a/b/**` for that).
 * A needed glob is granted only by an identical glob or a held `L/**` with L literal and a
 * prefix of the needed segments, which keeps the check sound without general glob inclusion.
 */
export function pathGrants(needed: string, held: string, options: PathGrantOptions = {}): boolean {
  if (needed === held) return true;
  const neededIsGlob = PATH_GLOB_CHARS.test(needed);
  if (!PATH_GLOB_CHARS.test(held)) return false; // a plain held path grants exactly itself
  const strict = options.rootExcluded === true;
  // Fast path for the common grant shape `L/**` with L literal (ceilings, home directories).
  if (!neededIsGlob && held.endsWith('/**') && !PATH_GLOB_CHARS.test(held.slice(0, -3))) {
    const prefix = held.slice(0, -3);
    if (prefix === '') return !strict || needed !== '/';
    return (!strict && needed === prefix) || needed.startsWith(`${prefix}/`);
  }
  const n = pathSegments(needed);
  const h = pathSegments(held);
  const isGlob = (seg: string): boolean => PATH_GLOB_CHARS.test(seg);
  if (neededIsGlob) {
    // A needed glob granted through `L/**` has more segments than L, so it never names the root either.
    const prefix = literalDeepPrefix(h, isGlob);
    return prefix !== undefined && prefix.length <= n.length && prefix.every((seg, i) => n[i] === seg);
  }
  // Strict: what the pattern without its trailing `**` matches is a root, refused (sound: only says no more often).
  if (strict && h[h.length - 1] === '**' && matchSegments(h.slice(0, -1), n)) return false;
  return matchSegments(h, n);
}

// ---------------------------------------------------------------- host (URL and domain)

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Canonical hostname: lowercase ASCII, one trailing dot removed, strict dotted-quad IPv4 only. */
function canonicalHost(raw: string, what: string): { host: string; ipv4: boolean } {
  if (raw === '') throw bad(`${what}: empty host`, 'give a host name, e.g. api.example.com');
  if (raw.startsWith('['))
    throw bad(`${what}: IP-literal host ${JSON.stringify(raw)} is not supported`, 'use a host name or a dotted IPv4 address');
  if (raw.includes('%')) throw bad(`${what}: percent-encoded host ${JSON.stringify(raw)}`, 'write the host name literally');
  if (/[^\x21-\x7e]/.test(raw))
    throw bad(`${what}: non-ASCII host ${JSON.stringify(raw)}`, 'write internationalized names in punycode (xn--...)');
  let host = raw.toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  const labels = host.split('.');
  const last = labels[labels.length - 1] ?? '';
  // WHATWG reads a numeric (or 0x) last label as IPv4 in many shapes (0x7f.1, 2130706433);
  // only the plain dotted-quad has one spelling, so only it is accepted.
  if (/^(0x[0-9a-f]*|[0-9]+)$/.test(last)) {
    const quad = labels.length === 4 && labels.every((l) => /^(0|[1-9][0-9]{0,2})$/.test(l) && Number(l) <= 255);
    if (!quad)
      throw bad(
        `${what}: ambiguous numeric host ${JSON.stringify(raw)}`,
        'write an IPv4 address as four decimal numbers 0-255 without leading zeros, e.g. 127.0.0.1',
      );
    return { host, ipv4: true };
  }
  for (const l of labels) {
    if (!LABEL.test(l))
      throw bad(
        `${what}: invalid host label ${JSON.stringify(l)} in ${JSON.stringify(raw)}`,
        'host labels are letters, digits and inner hyphens (1-63 chars)',
      );
  }
  return { host, ipv4: false };
}

// ---------------------------------------------------------------- URL prefix

interface ParsedUrl {
  scheme: 'http' | 'https';
  host: string;
  port: string; // '' for the scheme's default port
  path: string;
  query: string | undefined;
}

const DEFAULT_PORT = { http: '80', https: '443' } as const;
// RFC 3986 pchar minus '%' (handled separately): unreserved / sub-delims / ':' / '@'.
const PCHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]$/;
const UNRESERVED_DECODABLE = /^[A-Za-z0-9\-_~]$/; // '.' excluded: %2e is refused outright

function canonicalPercent(text: string, raw: string, inPath: boolean, allowed: (c: string) => boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '%') {
      const hex = text.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex))
        throw bad(`URL qualifier ${JSON.stringify(raw)}: "%" not followed by two hex digits`, 'encode a literal % as %25');
      const code = parseInt(hex, 16);
      const ch = String.fromCharCode(code);
      if (code < 0x20 || code === 0x7f)
        throw bad(`URL qualifier ${JSON.stringify(raw)} encodes a control character (%${hex})`, 'remove encoded control characters');
      // Encoded dot, slash or backslash in a path could be decoded downstream into a
      // traversal (`/v1/%2e%2e/admin`) after this prefix check has passed.
      if (inPath && (ch === '.' || ch === '/' || ch === '\\'))
        throw bad(
          `URL qualifier ${JSON.stringify(raw)} encodes ${JSON.stringify(ch)} in its path (%${hex})`,
          'write path separators and dots literally; encoded ones are refused',
        );
      out += UNRESERVED_DECODABLE.test(ch) ? ch : `%${hex.toUpperCase()}`;
      i += 2;
    } else if (allowed(c)) out += c;
    else throw bad(`URL qualifier ${JSON.stringify(raw)} contains ${describeChar(c)}`, 'percent-encode it or remove it');
  }
  return out;
}

function canonicalUrlPath(rawPath: string, raw: string): string {
  if (rawPath === '') return '/';
  const text = canonicalPercent(rawPath, raw, true, (c) => c === '/' || PCHAR.test(c));
  const segs = text.slice(1).split('/');
  const out: string[] = [];
  let trailingSlash = false;
  for (const [i, seg] of segs.entries()) {
    const isLast = i === segs.length - 1;
    // `//` is read differently by different servers (some collapse it before resolving
    // `..`), so an empty inner segment is refused instead of being guessed at.
    if (seg === '' && !isLast)
      throw bad(`URL qualifier ${JSON.stringify(raw)} has an empty path segment ("//")`, 'remove the doubled slash');
    if (seg === '.' || seg === '..') {
      if (seg === '..') {
        if (out.length === 0)
          throw bad(`URL qualifier ${JSON.stringify(raw)}: path climbs above /`, 'remove the ".." segments that go past the root');
        out.pop();
      }
      trailingSlash = isLast;
      continue;
    }
    if (seg === '' && isLast) {
      trailingSlash = true;
      continue;
    }
    out.push(seg);
    trailingSlash = false;
  }
  const joined = '/' + out.join('/');
  return trailingSlash && out.length > 0 ? joined + '/' : joined;
}

function parseUrl(raw: string): ParsedUrl {
  const ctl = CONTROL.exec(raw);
  if (ctl) throw bad(`URL qualifier contains ${describeChar(ctl[0])}`, 'remove control characters from the URL');
  if (raw.includes('\\')) throw bad(`URL qualifier ${JSON.stringify(raw)} contains a backslash`, 'use "/" in URLs');
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s.exec(raw);
  if (!m)
    throw bad(`URL qualifier ${JSON.stringify(raw)} is not an absolute http(s) URL`, 'write it as https://host/path, or "*" for any URL');
  const scheme = (m[1] as string).toLowerCase();
  if (scheme !== 'http' && scheme !== 'https')
    throw bad(
      `URL qualifier ${JSON.stringify(raw)}: scheme ${JSON.stringify(scheme)} is not allowed`,
      'only http:// and https:// URLs can be granted',
    );
  let rest = m[2] as string;
  // The fragment never leaves the client, so it cannot widen what is fetched: dropped.
  const hash = rest.indexOf('#');
  if (hash >= 0) rest = rest.slice(0, hash);
  const authEnd = rest.search(/[/?]/);
  const authority = authEnd < 0 ? rest : rest.slice(0, authEnd);
  const afterAuth = authEnd < 0 ? '' : rest.slice(authEnd);
  if (authority.includes('@'))
    throw bad(
      `URL qualifier ${JSON.stringify(raw)} contains userinfo ("@" before the host)`,
      'remove "user@" — credentials in URLs are refused, and "a.com@b.com" really means host b.com',
    );
  const colon = authority.indexOf(':');
  let hostPart = authority;
  let port = '';
  if (colon >= 0) {
    hostPart = authority.slice(0, colon);
    const p = authority.slice(colon + 1);
    if (!/^[0-9]{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535)
      throw bad(`URL qualifier ${JSON.stringify(raw)}: invalid port ${JSON.stringify(p)}`, 'a port is a number from 1 to 65535');
    port = String(Number(p));
    if (port === DEFAULT_PORT[scheme]) port = '';
  }
  const { host } = canonicalHost(hostPart, `URL qualifier ${JSON.stringify(raw)}`);
  const q = afterAuth.indexOf('?');
  const rawPath = q < 0 ? afterAuth : afterAuth.slice(0, q);
  const rawQuery = q < 0 ? undefined : afterAuth.slice(q + 1);
  const path = canonicalUrlPath(rawPath, raw);
  const query =
    rawQuery === undefined || rawQuery === ''
      ? undefined
      : canonicalPercent(rawQuery, raw, false, (c) => c === '/' || c === '?' || PCHAR.test(c));
  return { scheme, host, port, path, query };
}

function formatUrl(u: ParsedUrl): string {
  return `${u.scheme}://${u.host}${u.port === '' ? '' : `:${u.port}`}${u.path}${u.query === undefined ? '' : `?${u.query}`}`;
}

/**
 * Canonical URL prefix, parsed by a small strict parser (WHATWG `URL` is not guaranteed in
 * the workflow sandbox, and it silently repairs inputs this must refuse). `*` is the
 * "any URL, but a URL must be named" qualifier.
 */
export function canonicalUrlQualifier(raw: string): string {
  return raw === '*' ? '*' : formatUrl(parseUrl(raw));
}

// Parsing dominates a URL check; qualifiers repeat (held ones always, needed ones within a turn).
const parsedUrls = new Map<string, ParsedUrl>();

/** `parseUrl`, cached (bounded; a parse that throws is not cached). Results are never mutated. */
function parsedUrl(raw: string): ParsedUrl {
  let u = parsedUrls.get(raw);
  if (u === undefined) {
    if (parsedUrls.size >= CACHE_LIMIT) parsedUrls.clear();
    u = parseUrl(raw);
    parsedUrls.set(raw, u);
  }
  return u;
}

/** True when concrete path `p` is `prefix` or lies under it on a segment boundary. */
function underPrefix(p: string, prefix: string): boolean {
  if (p === prefix) return true;
  return p.startsWith(prefix.endsWith('/') ? prefix : prefix + '/');
}

/**
 * URL prefix attenuation: same scheme, exactly the same host (no suffix match), same port,
 * path prefix on segment boundaries (`/v1` grants `/v1` and `/v1/x`, never `/v10`). A held
 * URL without a query grants any query; with one, it grants only that exact path and query.
 */
export function urlGrants(needed: string, held: string): boolean {
  if (held === '*') return true;
  if (needed === '*') return false;
  const n = parsedUrl(needed);
  const h = parsedUrl(held);
  if (n.scheme !== h.scheme || n.host !== h.host || n.port !== h.port) return false;
  if (h.query !== undefined) return n.path === h.path && n.query === h.query;
  return underPrefix(n.path, h.path);
}

// ---------------------------------------------------------------- domain glob

/** Canonical domain glob: `*`, `*.example.com` (subdomains) or a plain host name. */
export function canonicalDomainQualifier(raw: string): string {
  if (raw === '*') return '*';
  const wild = raw.startsWith('*.');
  const rest = wild ? raw.slice(2) : raw;
  if (rest.includes('*'))
    throw bad(`domain qualifier ${JSON.stringify(raw)}: "*" may only be the whole leftmost label`, 'write *.example.com or example.com');
  const { host, ipv4 } = canonicalHost(rest, `domain qualifier ${JSON.stringify(raw)}`);
  if (ipv4) throw bad(`domain qualifier ${JSON.stringify(raw)} is an IP address`, 'net.dns resolves host names; name the host');
  return wild ? `*.${host}` : host;
}

/**
 * Domain attenuation at label boundaries: `*.example.com` grants `a.example.com` and
 * `a.b.example.com` (and the narrower glob `*.b.example.com`) but neither
 * `example.com` itself nor `evilexample.com`.
 */
export function domainGrants(needed: string, held: string): boolean {
  if (held === '*' || needed === held) return true;
  if (needed === '*' || !held.startsWith('*.')) return false;
  const suffix = held.slice(1); // ".example.com"
  const n = needed.startsWith('*.') ? needed.slice(2) : needed;
  return n.endsWith(suffix);
}

// ---------------------------------------------------------------- command allowlist (argv patterns)

/** A bare command name: no '/', no shell metacharacters, no leading '-' or '.'. */
const COMMAND = /^[A-Za-z0-9_+][A-Za-z0-9._+-]*$/;

/**
 * A plain word: a lowercase subcommand (`status`, `run_tests`) or a flag without a value (`-la`,
 * `--short`), at most 40 characters. Only plain words appear in a command scope: an argument
 * that is anything else (a path, a `--format=...` value, a number, a long token) is never
 * disclosed in a scope (scopes are audited), so argv patterns can only name plain words.
 */
export const PLAIN_ARGV_WORD = /^(?:[a-z][a-z0-9_-]{0,39}|--?[A-Za-z0-9][A-Za-z0-9_-]{0,38})$/;

/** The most plain words a command scope names after the command. */
export const ARGV_SCOPE_MAX_WORDS = 16;

/** One parsed allowlist entry: command, the literal words that must follow it, and whether more may follow. */
interface ArgvEntry {
  command: string;
  words: readonly string[];
  /** True when any further arguments are allowed (`git status *`, or a bare `git`). */
  open: boolean;
}

function formatArgvEntry(e: ArgvEntry): string {
  if (e.words.length === 0) return e.command; // a bare name: any arguments
  return [e.command, ...e.words, ...(e.open ? ['*'] : [])].join(' ');
}

function parseArgvEntry(entry: string, raw: string): ArgvEntry {
  if (entry === '')
    throw bad(
      `command allowlist ${JSON.stringify(raw)} has an empty entry`,
      'separate entries with single commas, e.g. shell.exec:ls,git status *',
    );
  const ctl = CONTROL.exec(entry);
  if (ctl) throw bad(`command allowlist entry contains ${describeChar(ctl[0])}`, 'write the entry on one line with single spaces');
  const tokens = entry.split(' ');
  const [name, ...rest] = tokens as [string, ...string[]];
  if (!COMMAND.test(name)) {
    if (name === '')
      throw bad(`command allowlist entry ${JSON.stringify(entry)} starts with a space`, 'start each entry with the command name');
    if (name.includes('/'))
      throw bad(
        `command allowlist entry ${JSON.stringify(name)} is a path`,
        'name the program (e.g. "rm"), not a path; commands are looked up on PATH',
      );
    const off = [...name].find((c) => !/[A-Za-z0-9._+-]/.test(c));
    if (off !== undefined)
      throw bad(
        `command allowlist entry ${JSON.stringify(name)} contains ${describeChar(off)}`,
        'a command name is letters, digits and . _ + - only; there is no shell, so metacharacters are never needed',
      );
    throw bad(
      `command allowlist entry ${JSON.stringify(name)} must not start with "${name[0]}"`,
      'a command name starts with a letter, digit, "_" or "+"',
    );
  }
  const open = rest[rest.length - 1] === '*';
  const words = open ? rest.slice(0, -1) : rest;
  if (words.length > ARGV_SCOPE_MAX_WORDS)
    throw bad(
      `command allowlist entry ${JSON.stringify(entry)} names more than ${ARGV_SCOPE_MAX_WORDS} words`,
      'end the pattern with * after the words that matter',
    );
  for (const w of words) {
    if (w === '')
      throw bad(`command allowlist entry ${JSON.stringify(entry)} has a double or trailing space`, 'separate words with single spaces');
    if (w === '*')
      throw bad(
        `command allowlist entry ${JSON.stringify(entry)}: "*" may only end the pattern`,
        'write e.g. "git status *"; a "*" stands for all remaining arguments',
      );
    if (!PLAIN_ARGV_WORD.test(w)) {
      throw bad(
        `command allowlist entry ${JSON.stringify(entry)}: ${JSON.stringify(w)} is not a plain word`,
        'argument patterns name only lowercase subcommands and flags without values (e.g. "git log --oneline *"); end with * to allow any further arguments',
      );
    }
  }
  return { command: name, words, open: open || words.length === 0 };
}

/**
 * Canonical command allowlist: comma-separated entries `cmd` (any arguments), `cmd w1 w2` (exactly
 * these arguments) or `cmd w1 w2 *` (these, then anything), words separated by single spaces and
 * each a {@link PLAIN_ARGV_WORD}. `cmd *` is written `cmd`. Deduplicated and sorted.
 */
export function canonicalAllowlistQualifier(raw: string): string {
  const entries = raw.split(',').map((e) => formatArgvEntry(parseArgvEntry(e, raw)));
  return [...new Set(entries)].sort().join(',');
}

/** True when every argv matching entry `n` also matches entry `h`. */
function argvEntryGrants(n: ArgvEntry, h: ArgvEntry): boolean {
  if (n.command !== h.command) return false;
  if (h.open) return n.words.length >= h.words.length && h.words.every((w, i) => n.words[i] === w);
  return !n.open && n.words.length === h.words.length && h.words.every((w, i) => n.words[i] === w);
}

/**
 * Allowlist attenuation: every needed entry is covered by a held one (same command; a held
 * open pattern covers needed entries starting with its words, a closed one only the same words).
 */
export function allowlistGrants(needed: string, held: string): boolean {
  const h = held.split(',').map((e) => parseArgvEntry(e, held));
  return needed.split(',').every((e) => {
    const n = parseArgvEntry(e, needed);
    return h.some((x) => argvEntryGrants(n, x));
  });
}

// ---------------------------------------------------------------- simple glob

const SIMPLE_GLOB_CHARS = /[*?]/;

/** Canonical simple glob: the string itself, minus anything a log could hide (control chars). */
export function canonicalGlobQualifier(raw: string): string {
  const ctl = CONTROL.exec(raw);
  if (ctl)
    throw bad(`qualifier "${raw.replace(CONTROL, '?')}" contains ${describeChar(ctl[0])}`, 'remove control characters from the qualifier');
  return raw;
}

const globRegexes = new Map<string, RegExp>();

function globRegex(pattern: string): RegExp {
  return cached(globRegexes, pattern, () => {
    const body = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[\\^$.|+()[\]{}]/g, '\\$&'))).join('');
    return new RegExp(`^${body}$`, 'su');
  });
}

/**
 * Simple-glob attenuation: `*` any run of characters (':' included), `?` one character,
 * everything else literal. A needed glob is granted only by an identical glob or a held
 * `L*` with L literal and a prefix of it (sound without general glob inclusion).
 */
export function globGrants(needed: string, held: string): boolean {
  if (needed === held) return true;
  if (SIMPLE_GLOB_CHARS.test(needed)) {
    if (!held.endsWith('*')) return false;
    const prefix = held.slice(0, -1);
    return !SIMPLE_GLOB_CHARS.test(prefix) && needed.startsWith(prefix);
  }
  return globRegex(held).test(needed);
}

// ---------------------------------------------------------------- dispatch

/** Canonical form of `raw` read as a `kind` qualifier; throws AivyxError('InvalidScope'). */
export function canonicalQualifier(kind: QualifierKind, raw: string): string {
  if (raw === '') throw bad('empty qualifier after ":"', 'drop the ":" for an unqualified scope, or name what the scope is limited to');
  switch (kind) {
    case 'path':
      return canonicalPathQualifier(raw);
    case 'url':
      return canonicalUrlQualifier(raw);
    case 'domain':
      return canonicalDomainQualifier(raw);
    case 'allowlist':
      return canonicalAllowlistQualifier(raw);
    case 'glob':
      return canonicalGlobQualifier(raw);
  }
}

/** True when canonical qualifier `needed` is granted by canonical qualifier `held` of the same kind. */
export function qualifierGrants(kind: QualifierKind, needed: string, held: string, options: PathGrantOptions = {}): boolean {
  switch (kind) {
    case 'path':
      return pathGrants(needed, held, options);
    case 'url':
      return urlGrants(needed, held);
    case 'domain':
      return domainGrants(needed, held);
    case 'allowlist':
      return allowlistGrants(needed, held);
    case 'glob':
      return globGrants(needed, held);
  }
}
