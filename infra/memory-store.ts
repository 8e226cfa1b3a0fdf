/**
 * The memory store behind memory.write/recall/forget (docs/MEMORY.md). Entries are sealed records
 * in the `memory` domain; `memory_tokens` is a blind index of HMACs of their normalized tokens and
 * tags, so the database can narrow a recall to candidates without ever seeing a word. Candidates
 * are opened and ranked here: distinct query terms matched, then newest first.
 */
import { createHmac } from 'node:crypto';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { sql, type Kysely } from 'kysely';
import { AivyxError } from '../core/errors.js';
import type { MemoryFilter } from '../core/tools/memory-fields.js';
import type { MemoryWriteInput } from '../core/tools/memory-write.js';
import type { Database } from './db/database.js';
import type { DomainHandle } from './storage/index.js';
import type { MemoryEntry, MemoryStore, RecallResult } from '../activities/tools/memory-port.js';

export type { MemoryEntry, MemoryStore, RecallResult };

/** The store's ports: the sealed `memory` domain, the database holding the index, and the memory subkey. */
export interface MemoryStoreDeps {
  db: Kysely<Database>;
  domain: Pick<DomainHandle, 'getJson' | 'putJson' | 'delete'>;
  /** `master.subkey('memory')`; the index key is derived from it, never used directly. */
  memoryKey: Uint8Array;
}

/** What is sealed per entry: the entry plus its index MACs, so forget deletes exactly its rows. */
interface SealedEntry extends MemoryEntry {
  v: 1;
  macs: string[];
}

const INDEX_SALT = utf8ToBytes('aivyx-v1-memory-index');
/** Index rows per INSERT statement: well under PostgreSQL's 65535 bind parameters (3 per row). */
const INSERT_ROWS = 5000;
/** Sealed puts in flight at once during bulk import (the pool size is about 10). */
const PUT_CONCURRENCY = 8;
/** Bounded MAC cache: tokens repeat heavily (Zipf), HMACs are the hot path of a bulk import. */
const MAC_CACHE_MAX = 50_000;
const END_OF_TIME = Number.MAX_SAFE_INTEGER;

function storageKey(id: string): string {
  return `entry/${id}`;
}

function publicView(e: SealedEntry): MemoryEntry {
  return {
    id: e.id,
    text: e.text,
    at: e.at,
    ...(e.session === undefined ? {} : { session: e.session }),
    ...(e.topic === undefined ? {} : { topic: e.topic }),
    ...(e.public ? { public: true } : {}),
    ...(e.untrusted ? { untrusted: e.untrusted } : {}),
  };
}

/** True when an opened entry really satisfies the filter and range (defence in depth over the index). */
function matches(e: MemoryEntry, f: MemoryFilter & { from?: number; to?: number }): boolean {
  if (f.session !== undefined && e.session !== f.session) return false;
  if (f.topic !== undefined && e.topic !== f.topic) return false;
  if (f.public && !e.public) return false;
  return e.at >= (f.from ?? 0) && e.at < (f.to ?? END_OF_TIME);
}

/** Runs `fn` over `items` with at most `n` in flight. */
async function eachLimited<T>(items: readonly T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
}

// ---------------------------------------------------------------- tokens

/** Words that carry no recall signal; dropping them keeps the index small and the ranking honest. */
const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can did do does for from had has have he her his how i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this to was we were what when ' +
    'where which who why will with you your'
  ).split(' '),
);
const MAX_TOKEN = 64;

/** Light English suffix stripping (plural, -ing, -ed), so "worked", "works" and "working" meet. */
function stem(t: string): string {
  if (/^\p{N}+$/u.test(t)) return t;
  let w = t;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(?:sh|ch|x|z|ss)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !/(?:ss|us|is)$/.test(w)) w = w.slice(0, -1);
  for (const suffix of ['ing', 'ed']) {
    if (w.length - suffix.length >= 3 && w.endsWith(suffix)) {
      w = w.slice(0, -suffix.length);
      // Undouble a final consonant pair (running → run), as Porter does, except l/s/z (falling → fall).
      if (w.length > 3 && w.at(-1) === w.at(-2) && /[b-df-hj-km-np-rtv-y]/.test(w.at(-1) as string)) w = w.slice(0, -1);
      break;
    }
  }
  return w;
}

/** Normalized tokens of `text`: NFKC, lower case, split on anything but letters and digits, stopwords dropped, stemmed. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const raw of text
    .normalize('NFKC')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)) {
    if (raw === '' || STOPWORDS.has(raw)) continue;
    out.push(stem(raw.slice(0, MAX_TOKEN)));
  }
  return out;
}

/** Creates the store. */
export function createMemoryStore(deps: MemoryStoreDeps): MemoryStore {
  const { db, domain } = deps;
  if (!(deps.memoryKey instanceof Uint8Array) || deps.memoryKey.length !== 32) {
    throw new AivyxError('Config', 'the memory store needs the 32-byte memory subkey', { hint: "pass master.subkey('memory')" });
  }
  // A key of its own: the memory subkey also seals the entries, and one key should do one job.
  const indexKey = hkdf(sha256, deps.memoryKey, INDEX_SALT, utf8ToBytes('blind-index'), 32);
  const cache = new Map<string, string>();

  // Prefixes separate the MAC spaces: the word "public" and the public tag never collide.
  function mac(kind: 't' | 'all' | 'session' | 'topic' | 'public' | 'id' | 'query', value = ''): string {
    const input = `${kind}\u0000${value}`;
    let m = cache.get(input);
    if (m === undefined) {
      m = createHmac('sha256', indexKey).update(input, 'utf8').digest('hex').slice(0, 32);
      if (cache.size >= MAC_CACHE_MAX) cache.clear();
      cache.set(input, m);
    }
    return m;
  }

  /** Tag MACs of a filter, most selective first; the first drives a query without terms. */
  function filterMacs(f: MemoryFilter): string[] {
    const out: string[] = [];
    if (f.session !== undefined) out.push(mac('session', f.session));
    if (f.topic !== undefined) out.push(mac('topic', f.topic));
    if (f.public) out.push(mac('public'));
    return out;
  }

  function sealedFor(input: MemoryWriteInput, id: string, at: number, untrusted?: string): SealedEntry {
    const terms = [...new Set(tokenize(input.text))].map((t) => mac('t', t));
    const macs = [mac('all'), ...filterMacs(input), ...terms];
    return {
      v: 1,
      id,
      text: input.text,
      at,
      ...(input.session === undefined ? {} : { session: input.session }),
      ...(input.topic === undefined ? {} : { topic: input.topic }),
      ...(input.public ? { public: true } : {}),
      ...(untrusted ? { untrusted } : {}),
      macs: [...new Set(macs)],
    };
  }

  async function insertIndex(entries: readonly SealedEntry[]): Promise<void> {
    const rows = entries.flatMap((e) => e.macs.map((m) => ({ token_mac: m, memory_key: e.id, created_at_ms: e.at })));
    for (let i = 0; i < rows.length; i += INSERT_ROWS) {
      // ON CONFLICT DO NOTHING: a retried write finds its rows already there.
      await db
        .insertInto('memory_tokens')
        .values(rows.slice(i, i + INSERT_ROWS))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }

  /** The candidates' ids, best first: SQL ranks by distinct terms matched, then recency. */
  async function candidates(
    termMacs: readonly string[],
    filter: MemoryFilter,
    from: number,
    to: number,
    cap: number | undefined,
  ): Promise<string[]> {
    const tags = filterMacs(filter);
    const drivers = termMacs.length > 0 ? [...termMacs] : [tags.shift() ?? mac('all')];
    let q = db
      .selectFrom('memory_tokens as t')
      .select('t.memory_key')
      .where('t.token_mac', 'in', drivers)
      .where('t.created_at_ms', '>=', from)
      .where('t.created_at_ms', '<', to);
    // Each remaining tag is a primary-key probe per candidate.
    for (const tag of tags) {
      q = q.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('memory_tokens as f')
            .select(sql`1`.as('one'))
            .where('f.token_mac', '=', tag)
            .whereRef('f.memory_key', '=', 't.memory_key'),
        ),
      );
    }
    const grouped =
      termMacs.length > 0
        ? q
            .groupBy('t.memory_key')
            .orderBy(sql`count(*)`, 'desc')
            .orderBy(sql`max(t.created_at_ms)`, 'desc')
            .orderBy('t.memory_key', 'desc')
        : q.orderBy('t.created_at_ms', 'desc').orderBy('t.memory_key', 'desc');
    const rows = await (cap === undefined ? grouped : grouped.limit(cap)).execute();
    return rows.map((r) => r.memory_key);
  }

  async function open(id: string): Promise<SealedEntry | undefined> {
    return domain.getJson<SealedEntry>(storageKey(id));
  }

  /** Deletes the sealed entry first, then its index rows: a crash in between leaves only harmless orphan rows. */
  async function remove(id: string, entry: SealedEntry | undefined): Promise<void> {
    await domain.delete(storageKey(id));
    let q = db.deleteFrom('memory_tokens').where('memory_key', '=', id);
    // With the entry's MACs every delete is a primary-key lookup; an orphan needs the slow scan.
    if (entry !== undefined) q = q.where('token_mac', 'in', entry.macs);
    await q.execute();
  }

  return {
    idFor(idemKey) {
      return `m_${mac('id', idemKey)}`;
    },

    async write(input, opts) {
      const existing = await open(opts.id);
      if (existing !== undefined) return { entry: publicView(existing), created: false };
      // An attempt that died after indexing left rows with its timestamp: keep it, so index and entry agree.
      const prior = await db
        .selectFrom('memory_tokens')
        .select('created_at_ms')
        .where('token_mac', '=', mac('all'))
        .where('memory_key', '=', opts.id)
        .executeTakeFirst();
      const sealed = sealedFor(input, opts.id, prior?.created_at_ms ?? opts.at, opts.untrusted);
      // Index first, then the entry: the entry's presence is what marks a write as done.
      await insertIndex([sealed]);
      await domain.putJson(storageKey(opts.id), sealed);
      return { entry: publicView(sealed), created: true };
    },

    async writeMany(items) {
      const sealed = items.map((i) => sealedFor(i.input, i.id, i.at));
      await insertIndex(sealed);
      await eachLimited(sealed, PUT_CONCURRENCY, (e) => domain.putJson(storageKey(e.id), e));
    },

    async recall(input) {
      const terms = [...new Set(tokenize(input.query ?? ''))];
      const from = input.from ?? 0;
      const to = input.to ?? END_OF_TIME;
      // A few spare candidates cover orphaned rows, and one more tells whether there is more.
      const ids = await candidates(
        terms.map((t) => mac('t', t)),
        input,
        from,
        to,
        input.limit + 4,
      );
      const opened = await Promise.all(ids.map(open));
      const termSet = new Set(terms);
      const ranked = opened
        .filter((e): e is SealedEntry => e !== undefined && matches(e, { ...input, from, to }))
        .map((e) => ({ e, score: terms.length === 0 ? 0 : new Set(tokenize(e.text).filter((t) => termSet.has(t))).size }))
        .filter((r) => terms.length === 0 || r.score > 0)
        .sort((a, b) => b.score - a.score || b.e.at - a.e.at || (a.e.id < b.e.id ? 1 : a.e.id > b.e.id ? -1 : 0));
      return { entries: ranked.slice(0, input.limit).map((r) => publicView(r.e)), more: ranked.length > input.limit };
    },

    async forget(input) {
      const range = { from: input.from ?? 0, to: input.to ?? END_OF_TIME };
      if (input.id !== undefined) {
        const entry = await open(input.id);
        if (entry === undefined) {
          // Only an id the index knows gets the slow orphan clean-up: a made-up id costs one probe.
          const known = await db
            .selectFrom('memory_tokens')
            .select('memory_key')
            .where('token_mac', '=', mac('all'))
            .where('memory_key', '=', input.id)
            .executeTakeFirst();
          if (known) await remove(input.id, undefined);
          return { forgotten: 0 };
        }
        if (!matches(entry, { ...input, ...range })) return { forgotten: 0 };
        await remove(input.id, entry);
        return { forgotten: 1 };
      }
      let forgotten = 0;
      const ids = await candidates([], input, range.from, range.to, undefined);
      await eachLimited(ids, PUT_CONCURRENCY, async (id) => {
        const entry = await open(id);
        if (entry !== undefined && !matches(entry, { ...input, ...range })) return;
        await remove(id, entry);
        if (entry !== undefined) forgotten++;
      });
      return { forgotten };
    },

    async has(id) {
      return (await open(id)) !== undefined;
    },

    async get(id) {
      const entry = await open(id);
      return entry === undefined ? undefined : publicView(entry);
    },

    queryTag(query) {
      const terms = [...new Set(tokenize(query ?? ''))].sort();
      return terms.length === 0 ? 'none' : mac('query', terms.join(' ')).slice(0, 16);
    },
  };
}
