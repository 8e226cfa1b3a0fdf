/**
 * Issue 35: `graph.query` latency on PostgreSQL at 10k and 100k relations (target: p50 ≤ 20 ms at
 * 100k, like memory recall), and what learned skills cost in prompt tokens. The graph is a
 * synthetic organisation: people work on projects (a few each), work for organisations and know
 * each other; queries go through the real store (blind-index lookup, indexed hops, the answers'
 * sealed names opened). Each latency is also a ratio to the floor measured in the same run: one
 * sealed-record read (one PostgreSQL round trip and one XChaCha20-Poly1305 open).
 *
 * Alone: `tsx bench/graph.ts` on a fresh database (AIVYX_BENCH_PG as for `npm run bench`).
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { encode } from 'gpt-tokenizer';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { toolSpecs } from '../core/tool-catalog.js';
import { parseGraphQueryInput } from '../core/tools/graph-query.js';
import type { EntityKind } from '../core/tools/graph-fields.js';
import type { RelationInput } from '../core/tools/graph-write.js';
import { MasterKey } from '../infra/crypto/index.js';
import { openDatabase, type Database } from '../infra/db/index.js';
import { createGraphStore } from '../infra/graph-store.js';
import { SealedStorage } from '../infra/storage/index.js';
import { percentile, rng } from './stats.js';

const QUERIES = 200;
const BATCH = 5000;

const ent = (name: string, kind: EntityKind) => ({ name, kind });

/**
 * `n` relations over people (one per 5 relations), projects (one per 50) and organisations (one per
 * 200): per person about 2.5 works_on, 1 works_for and 1.5 knows.
 */
function organisation(n: number, rand: () => number): { relations: RelationInput[]; people: number } {
  const people = Math.max(10, Math.floor(n / 5));
  const projects = Math.max(2, Math.floor(n / 50));
  const orgs = Math.max(2, Math.floor(n / 200));
  const person = (i: number) => ent(`Person ${i}`, 'person');
  const pick = (k: number) => Math.floor(rand() * k);
  const out: RelationInput[] = [];
  for (let i = 0; out.length < n; i = (i + 1) % people) {
    const r = rand();
    if (r < 0.5) out.push({ subject: person(i), predicate: 'works_on', object: ent(`Project ${pick(projects)}`, 'project') });
    else if (r < 0.7) out.push({ subject: person(i), predicate: 'works_for', object: ent(`Organisation ${pick(orgs)}`, 'organisation') });
    else out.push({ subject: person(i), predicate: 'knows', object: person(pick(people)) });
  }
  return { relations: out, people };
}

async function timed(times: number[], fn: () => Promise<unknown>): Promise<void> {
  const t = performance.now();
  await fn();
  times.push(performance.now() - t);
}

/** Runs the graph benchmark on `db` (PostgreSQL, migrated); the markdown section for docs/BENCHMARKS.md. */
export async function benchGraphQuery(db: Kysely<Database>, master: MasterKey): Promise<string[]> {
  const domain = SealedStorage.open(db, master).domain('memory');
  const store = createGraphStore({ db, domain, memoryKey: master.subkey('memory') });
  await domain.putJson('bench/floor', { name: 'Person 0', kind: 'person' });
  const lines = [
    '## Knowledge graph query',
    '',
    `\`graph.query\` through the store on PostgreSQL: the start entity found by blind index, the hops as indexed joins, the answers' sealed names opened. A synthetic organisation (people work on a few projects, work for organisations, know each other); ${QUERIES} sequential queries per row after 20 warm-up ones, limit 20. The floor is one sealed-record read on the same database, measured in the same run.`,
    '',
    '| relations | query | p50 | p95 | p50 / floor |',
    '|---|---|---|---|---|',
  ];
  const kinds: { name: string; hops: { predicate?: string; direction?: 'in' | 'out' }[] }[] = [
    { name: 'who else works on my projects (2 hops)', hops: [{ predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] },
    { name: 'one hop, any predicate', hops: [{}] },
    {
      name: 'projects of colleagues at my organisation (3 hops)',
      hops: [{ predicate: 'works_for' }, { predicate: 'works_for', direction: 'in' }, { predicate: 'works_on' }],
    },
  ];
  let have = 0;
  for (const size of [10_000, 100_000]) {
    const { relations, people } = organisation(size, rng(size));
    const t = performance.now();
    for (let i = have; i < relations.length; i += BATCH) await store.writeMany(relations.slice(i, i + BATCH), Date.now());
    const loadS = ((performance.now() - t) / 1000).toFixed(1);
    have = size;
    // Fresh statistics, as autovacuum would have by the time a real graph holds this much.
    await sql`analyze graph_relations`.execute(db);
    await sql`analyze graph_entities`.execute(db);
    const floor: number[] = [];
    for (let i = 0; i < QUERIES; i++) await timed(floor, () => domain.getJson('bench/floor'));
    const floorP50 = percentile(floor, 0.5);
    const qr = rng(7);
    for (const kind of kinds) {
      const queries = Array.from({ length: QUERIES + 20 }, () =>
        parseGraphQueryInput({ from: `person ${Math.floor(qr() * people)}`, hops: kind.hops, limit: 20 }),
      );
      for (const q of queries.slice(0, 20)) await store.query(q);
      const times: number[] = [];
      for (const q of queries.slice(20)) await timed(times, () => store.query(q));
      const p50 = percentile(times, 0.5);
      const mark = size === 100_000 && kind === kinds[0] ? ' (target ≤ 20 ms)' : '';
      lines.push(
        `| ${size.toLocaleString('en-US')} | ${kind.name} | ${p50.toFixed(2)} ms${mark} | ${percentile(times, 0.95).toFixed(2)} ms | ${(p50 / floorP50).toFixed(1)}× |`,
      );
    }
    lines.push(`| ${size.toLocaleString('en-US')} | (floor: one sealed-record read) | ${floorP50.toFixed(2)} ms | | 1.0× |`);
    lines.push(`| ${size.toLocaleString('en-US')} | (bulk load) | ${loadS} s | | |`);
  }
  lines.push('');
  return lines;
}

/** A plausible learned skill's listing line. */
function skillLine(i: number): { name: string; summary: string } {
  const verbs = ['File', 'Summarise', 'Renew', 'Reconcile', 'Back up', 'Draft', 'Collect', 'Archive'];
  const things = [
    'the month’s receipts into the ledger',
    'this week’s unread invoices',
    'the passport reminder',
    'the shared calendar with the team',
  ];
  return {
    name: `skill-${i}-${verbs[i % verbs.length]!.toLowerCase().replace(' ', '-')}`,
    summary: `${verbs[i % verbs.length]} ${things[i % things.length]}`,
  };
}

/** What skills cost a turn in prompt tokens (o200k tokenizer): the three tool definitions, and a listing of n skills. */
export function benchSkillTokens(): string[] {
  const tokens = (value: unknown) => encode(typeof value === 'string' ? value : JSON.stringify(value)).length;
  const specs = toolSpecs(['skills.propose', 'skills.list', 'skills.invoke']);
  const all = tokens(toolSpecs());
  const lines = [
    '## Learned skills in the prompt',
    '',
    'Prompt tokens (o200k_base, gpt-tokenizer) of what a turn is shown: the skills tools’ definitions (always, with the rest of the catalog), and a `skills.list` result as the model reads it (name and one-line summary per skill; a body costs tokens only when `skills.invoke` loads it). The floor is the whole tool catalog’s definitions.',
    '',
    '| what | tokens | ratio to the whole catalog |',
    '|---|---|---|',
    `| the whole tool catalog's definitions (floor) | ${all} | 1.00× |`,
    `| skills.propose + skills.list + skills.invoke definitions | ${tokens(specs)} | ${(tokens(specs) / all).toFixed(2)}× |`,
  ];
  for (const n of [10, 50, 100]) {
    const listing = { skills: Array.from({ length: n }, (_, i) => skillLine(i)) };
    const t = tokens(listing);
    lines.push(`| skills.list result, ${n} skills (${(t / n).toFixed(1)} per skill) | ${t} | ${(t / all).toFixed(2)}× |`);
  }
  const body = {
    name: 'file-receipts',
    version: 1,
    summary: 'File the month’s receipts into the ledger',
    whenToUse: 'The owner asks to file receipts.',
    steps: [
      'Read ~/inbox/receipts.txt with fs.read',
      'Write one line per receipt to ~/ledger/<month>.txt with fs.write',
      'Tell the owner the total',
    ],
    tools: ['fs.read', 'fs.write'],
    unavailableTools: [],
    note: 'Guidance only: follow these steps with the tools you have; this skill grants no tool or permission.',
  };
  lines.push(`| one skills.invoke result (3 steps) | ${tokens(body)} | ${(tokens(body) / all).toFixed(2)}× |`, '');
  return lines;
}

// Alone: a fresh database, both sections printed.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const admin = process.env.AIVYX_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `aivyx_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`create database ${name}`);
  await c.end();
  const { db, close } = await openDatabase({ databaseUrl: admin.replace(/\/[^/]*$/, `/${name}`) });
  try {
    const lines = [...(await benchGraphQuery(db, new MasterKey(new Uint8Array(32).fill(3)))), ...benchSkillTokens()];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await close();
    const d = new pg.Client({ connectionString: admin });
    await d.connect();
    await d.query(`drop database if exists ${name} with (force)`);
    await d.end();
  }
}
