/**
 * Memory recall latency on PostgreSQL at 10k and 100k entries (target: p50 ≤ 20 ms at 100k).
 * Entries are synthetic notes drawn from a Zipf-distributed vocabulary (real notes reuse a few
 * words a lot), spread over a year, with sessions and topics; recall goes through the real
 * store: blind-index query, sealed entries opened and ranked in process.
 */
import { sql, type Kysely } from 'kysely';
import { createMemoryStore, type MemoryStore } from '../infra/memory-store.js';
import { parseMemoryRecallInput } from '../core/tools/memory-recall.js';
import { type MemoryWriteInput } from '../core/tools/memory-write.js';
import type { MasterKey } from '../infra/crypto/index.js';
import type { Database } from '../infra/db/index.js';
import { SealedStorage } from '../infra/storage/index.js';
import { percentile, rng } from './stats.js';

const DAY = 86_400_000;
const VOCABULARY = 5000;
const WORDS_PER_ENTRY = 12;
const BATCH = 2000;
const QUERIES = 200;
const T_END = Date.UTC(2026, 11, 1);

/** Pronounceable pseudo-words that survive tokenization unchanged (no stopwords, no stemmable suffix). */
function vocabulary(n: number): string[] {
  const c = 'bdfgklmnprtvz';
  const v = 'aeiou';
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) {
    let w = '';
    for (let x = i, k = 0; k < 3; k++, x = Math.floor(x / 65)) w += (c[x % 13] as string) + (v[Math.floor(x / 13) % 5] as string);
    out.push(`${w}x`);
  }
  return out;
}

/** Zipf(s = 1) sampler over ranks 0..n-1 by inverse CDF on precomputed cumulative weights. */
function zipf(n: number, rand: () => number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) cdf[i] = sum += 1 / (i + 1);
  return () => {
    const u = rand() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

async function fill(
  store: MemoryStore,
  from: number,
  to: number,
  words: readonly string[],
  rand: () => number,
  pick: () => number,
): Promise<void> {
  for (let start = from; start < to; start += BATCH) {
    const items = [];
    for (let i = start; i < Math.min(to, start + BATCH); i++) {
      const text = Array.from({ length: WORDS_PER_ENTRY }, () => words[pick()] as string).join(' ');
      const input: MemoryWriteInput = {
        text,
        ...(i % 3 === 0 ? { session: `s${i % 50}` } : {}),
        ...(i % 4 === 0 ? { topic: `t${i % 20}` } : {}),
      };
      items.push({ input, id: store.idFor(`bench/${i}`), at: T_END - Math.floor(rand() * 365 * DAY) });
    }
    await store.writeMany(items);
  }
}

async function measure(store: MemoryStore, queries: readonly unknown[]): Promise<number[]> {
  for (const q of queries.slice(0, 20)) await store.recall(parseMemoryRecallInput(q)); // warm caches and plans
  const times: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    await store.recall(parseMemoryRecallInput(q));
    times.push(performance.now() - t);
  }
  return times;
}

/** Runs the benchmark on `db` (PostgreSQL, migrated) and returns the markdown section for docs/BENCHMARKS.md. */
export async function benchMemoryRecall(db: Kysely<Database>, master: MasterKey): Promise<string[]> {
  const store = createMemoryStore({ db, domain: SealedStorage.open(db, master).domain('memory'), memoryKey: master.subkey('memory') });
  const rand = rng(42);
  const words = vocabulary(VOCABULARY);
  const pick = zipf(VOCABULARY, rand);
  // Queries: 2–3 words of the mid-frequency band (ranks 20–1000: frequent enough to hit many entries).
  const qr = rng(7);
  const word = () => words[20 + Math.floor(qr() * 980)] as string;
  const kinds: { name: string; make: () => unknown }[] = [
    { name: '2–3 words, limit 10', make: () => ({ query: Array.from({ length: 2 + Math.floor(qr() * 2) }, word).join(' ') }) },
    {
      name: '2 words + 30-day range',
      make: () => {
        const to = T_END - Math.floor(qr() * 300) * DAY;
        return { query: `${word()} ${word()}`, from: to - 30 * DAY, to };
      },
    },
    {
      name: 'yesterday, no query',
      make: () => {
        const from = T_END - Math.floor(qr() * 365) * DAY;
        return { from, to: from + DAY };
      },
    },
    { name: 'session + 1 word', make: () => ({ session: `s${Math.floor(qr() * 50)}`, query: word() }) },
  ];
  const lines = [
    '## Memory recall',
    '',
    `Recall through the store on PostgreSQL: blind-index query, candidates opened (sealed) and ranked in process. Synthetic notes of ${WORDS_PER_ENTRY} words from a Zipf vocabulary of ${VOCABULARY}, over one year; ${QUERIES} sequential recalls per row after 20 warm-up ones.`,
    '',
    '| entries | recall | p50 | p95 |',
    '|---|---|---|---|',
  ];
  let have = 0;
  for (const size of [10_000, 100_000]) {
    const t = performance.now();
    await fill(store, have, size, words, rand, pick);
    have = size;
    const loadS = ((performance.now() - t) / 1000).toFixed(1);
    // Fresh statistics, as autovacuum would have by the time a real store holds this much.
    await sql`analyze memory_tokens`.execute(db);
    for (const kind of kinds) {
      const times = await measure(store, Array.from({ length: QUERIES }, kind.make));
      const p50 = percentile(times, 0.5);
      const p95 = percentile(times, 0.95);
      const mark = size === 100_000 && kind === kinds[0] ? ' (target p50 ≤ 20 ms)' : '';
      lines.push(`| ${size.toLocaleString('en-US')} | ${kind.name} | ${p50.toFixed(2)} ms${mark} | ${p95.toFixed(2)} ms |`);
    }
    lines.push(
      `| ${size.toLocaleString('en-US')} | (bulk load of ${(size === 10_000 ? size : size - 10_000).toLocaleString('en-US')} entries) | ${loadS} s | |`,
    );
  }
  lines.push('');
  return lines;
}
