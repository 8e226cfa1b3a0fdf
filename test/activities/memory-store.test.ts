/** The memory store on both backends: write/recall/forget, ranking, filters, idempotency, and no plaintext at rest. */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMemoryStore, tokenize, type MemoryStore } from '../../infra/memory-store.js';
import { createMemoryTools } from '../../activities/tools/memory-tools.js';
import type { ToolRunContext } from '../../activities/tools/tool-implementation.js';
import { parseMemoryForgetInput } from '../../core/tools/memory-forget.js';
import { parseMemoryRecallInput } from '../../core/tools/memory-recall.js';
import { parseMemoryWriteInput } from '../../core/tools/memory-write.js';
import { MasterKey } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 11, 1, 12); // 2026-12-01 12:00 UTC

describe('tokenize', () => {
  it('normalizes, drops stopwords and stems lightly', () => {
    expect(tokenize('What did I WORK on? Worked, works, working!')).toEqual(['work', 'work', 'work', 'work']);
    expect(tokenize('ﬁxed the Ｌogin bugs')).toEqual(['fix', 'login', 'bug']);
    expect(tokenize('running planned falling added 2026')).toEqual(['run', 'plan', 'fall', 'add', '2026']);
    expect(tokenize('Grüße, café-Notizen')).toEqual(['grüße', 'café', 'notizen']);
  });
});

describe.each(openStorageBackends())('memory store on $name', (backend) => {
  let s: OpenDatabase;
  let store: MemoryStore;
  const master = new MasterKey(new Uint8Array(32).fill(7));
  let n = 0;
  const write = (input: unknown, at: number, id = store.idFor(`wf/run/${++n}`)) => store.write(parseMemoryWriteInput(input), { id, at });
  const recall = async (input: unknown) => (await store.recall(parseMemoryRecallInput(input))).entries.map((e) => e.text);

  beforeAll(async () => {
    s = await backend.open();
    store = createMemoryStore({ db: s.db, domain: SealedStorage.open(s.db, master).domain('memory'), memoryKey: master.subkey('memory') });
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    await sql`delete from sealed_records`.execute(s.db);
    await sql`delete from memory_tokens`.execute(s.db);
  });

  it('writes, recalls by words (best match, then newest) and by time range', async () => {
    await write({ text: 'Fixed the login bug in the auth service' }, T0 - DAY);
    await write({ text: 'Reviewed the auth pull request' }, T0);
    await write({ text: 'Lunch with Sam' }, T0 + 1000);
    await write({ text: 'Login page redesign: fixed the auth flow' }, T0 - 2 * DAY);
    expect(await recall({ query: 'auth login fix' })).toEqual([
      'Fixed the login bug in the auth service',
      'Login page redesign: fixed the auth flow',
      'Reviewed the auth pull request',
    ]);
    expect(await recall({ query: 'auth', limit: 1 })).toEqual(['Reviewed the auth pull request']);
    const r = await store.recall(parseMemoryRecallInput({ query: 'auth', limit: 1 }));
    expect(r.more).toBe(true);
    // No query: newest first within the range; `to` is exclusive.
    expect(await recall({})).toEqual([
      'Lunch with Sam',
      'Reviewed the auth pull request',
      'Fixed the login bug in the auth service',
      'Login page redesign: fixed the auth flow',
    ]);
    expect(await recall({ from: T0 - DAY, to: T0 })).toEqual(['Fixed the login bug in the auth service']);
    expect(await recall({ from: new Date(T0 - 2 * DAY).toISOString(), to: new Date(T0).toISOString(), query: 'auth' })).toEqual([
      'Fixed the login bug in the auth service',
      'Login page redesign: fixed the auth flow',
    ]);
    expect(await recall({ query: 'nothing matches this' })).toEqual([]);
  });

  it('filters by session and topic, and a public filter returns public entries only', async () => {
    await write({ text: 'private note in s1', session: 's1' }, T0);
    await write({ text: 'work note in s1', session: 's1', topic: 'Work' }, T0 + 1);
    await write({ text: 'work note, no session', topic: 'work' }, T0 + 2);
    await write({ text: 'public work note', topic: 'work', public: true }, T0 + 3);
    await write({ text: 'public recipe note', topic: 'recipes', public: true }, T0 + 4);
    expect(await recall({ session: 's1' })).toEqual(['work note in s1', 'private note in s1']);
    expect(await recall({ session: 's1', topic: 'WORK' })).toEqual(['work note in s1']);
    expect(await recall({ topic: 'work' })).toEqual(['public work note', 'work note, no session', 'work note in s1']);
    expect(await recall({ public: true })).toEqual(['public recipe note', 'public work note']);
    expect(await recall({ public: true, topic: 'work', query: 'note' })).toEqual(['public work note']);
    expect(await recall({ public: true, query: 'private note s1' })).toEqual(['public recipe note', 'public work note']);
    const [e] = (await store.recall(parseMemoryRecallInput({ public: true, limit: 1 }))).entries;
    expect(e).toMatchObject({ topic: 'recipes', public: true });
    expect(e?.session).toBeUndefined();
  });

  it('stores a retried write (same idemKey) once, with its first timestamp', async () => {
    const id = store.idFor('wf-1/run-1/7');
    expect(store.idFor('wf-1/run-1/7')).toBe(id);
    expect(store.idFor('wf-1/run-2/7')).not.toBe(id);
    expect(id).toMatch(/^m_[0-9a-f]{32}$/);
    const a = await store.write(parseMemoryWriteInput({ text: 'once only' }), { id, at: T0 });
    const b = await store.write(parseMemoryWriteInput({ text: 'once only' }), { id, at: T0 + 5000 });
    expect(a.created).toBe(true);
    expect(b).toEqual({ entry: a.entry, created: false });
    expect((await store.recall(parseMemoryRecallInput({ query: 'once' }))).entries).toEqual([{ id, text: 'once only', at: T0 }]);
    // An attempt that died after indexing but before sealing: the retry keeps the indexed time.
    const id2 = store.idFor('wf-1/run-1/8');
    await store.write(parseMemoryWriteInput({ text: 'half done' }), { id: id2, at: T0 });
    await SealedStorage.open(s.db, master).domain('memory').delete(`entry/${id2}`);
    const c = await store.write(parseMemoryWriteInput({ text: 'half done' }), { id: id2, at: T0 + 9999 });
    expect(c.entry.at).toBe(T0);
  });

  it('the tools: a retried memory.write (same idemKey) stores once; every call records its MemoryAccess', async () => {
    const access: unknown[] = [];
    const ctx = (idemKey: string): ToolRunContext => ({
      signal: new AbortController().signal,
      heartbeat: () => undefined,
      idemKey,
      turnId: 't1',
      held: ['memory.read', 'memory.write', 'memory.forget'],
      recordMemoryAccess: async (e) => void access.push(e),
    });
    let clock = T0;
    const [w, r, f] = createMemoryTools({ store, now: () => clock++ });
    const first = await w!.run({ text: 'Retried note', topic: 'Work' }, ctx('wf/run/activity-9'));
    const retry = await w!.run({ text: 'Retried note', topic: 'Work' }, ctx('wf/run/activity-9'));
    expect(retry).toEqual(first);
    expect(first).toMatchObject({ kind: 'completed', output: { id: store.idFor('wf/run/activity-9'), at: new Date(T0).toISOString() } });
    const found = await r!.run({ query: 'retried', topic: 'work' }, ctx('wf/run/activity-10'));
    expect(found).toMatchObject({
      kind: 'completed',
      output: { entries: [{ text: 'Retried note', topic: 'work', at: new Date(T0).toISOString() }], more: false },
    });
    const id = store.idFor('wf/run/activity-9');
    expect(await f!.run({ id }, ctx('wf/run/activity-11'))).toEqual({ kind: 'completed', output: { forgotten: 1 }, verified: 'Verified' });
    expect(access).toEqual([
      { operation: 'Write', scope: 'memory.write:topic:work', queryOrKey: id },
      { operation: 'Write', scope: 'memory.write:topic:work', queryOrKey: id },
      { operation: 'Read', scope: 'memory.read:topic:work', queryOrKey: `query:${store.queryTag('retried')} from:any to:any` },
      { operation: 'Forget', scope: 'memory.forget', queryOrKey: id },
    ]);
    expect(store.queryTag('Retried')).toBe(store.queryTag('retried'));
    expect(store.queryTag('retried')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('forgets by id (only when the filter matches) and by filter and range', async () => {
    const a = (await write({ text: 'alpha note', session: 's1' }, T0)).entry.id;
    await write({ text: 'beta note', session: 's1' }, T0 + DAY);
    await write({ text: 'gamma note', session: 's2' }, T0);
    await write({ text: 'delta note' }, T0 - DAY);
    expect(await store.forget(parseMemoryForgetInput({ id: a, session: 's2' }))).toEqual({ forgotten: 0 });
    expect(await store.has(a)).toBe(true);
    expect(await store.forget(parseMemoryForgetInput({ id: a }))).toEqual({ forgotten: 1 });
    expect(await store.forget(parseMemoryForgetInput({ id: a }))).toEqual({ forgotten: 0 });
    expect(await store.has(a)).toBe(false);
    expect(await recall({ query: 'alpha' })).toEqual([]);
    expect(await store.forget(parseMemoryForgetInput({ session: 's1', from: T0 + 1 }))).toEqual({ forgotten: 1 });
    expect(await recall({})).toEqual(['gamma note', 'delta note']);
    expect(await store.forget(parseMemoryForgetInput({ to: T0 }))).toEqual({ forgotten: 1 });
    expect(await recall({})).toEqual(['gamma note']);
    // Nothing of the forgotten entries is left in the index.
    const rows = await s.db
      .selectFrom('memory_tokens')
      .select(sql<number>`count(distinct memory_key)`.as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(1);
  });

  it('cleans up orphaned index rows (entry sealed-deleted, rows left by a crash)', async () => {
    const id = (await write({ text: 'orphan me' }, T0)).entry.id;
    await SealedStorage.open(s.db, master).domain('memory').delete(`entry/${id}`);
    expect(await recall({ query: 'orphan' })).toEqual([]);
    expect(await store.forget(parseMemoryForgetInput({ id }))).toEqual({ forgotten: 0 });
    expect(await s.db.selectFrom('memory_tokens').selectAll().where('memory_key', '=', id).execute()).toEqual([]);
  });

  it('keeps no plaintext in the database: index rows are MACs, entries are sealed', async () => {
    const secret = 'Zanzibarquokka meeting about Pemberton merger';
    await write({ text: secret, session: 'sessionzeta', topic: 'topicomega' }, T0);
    const tokens = await s.db.selectFrom('memory_tokens').selectAll().execute();
    expect(tokens.length).toBeGreaterThan(4);
    for (const r of tokens) expect(r.token_mac).toMatch(/^[0-9a-f]{32}$/);
    const dump =
      JSON.stringify(tokens) +
      JSON.stringify((await sql`select key, encode(ciphertext, 'escape') as c from sealed_records`.execute(s.db)).rows);
    for (const word of ['zanzibar', 'quokka', 'pemberton', 'merger', 'meeting', 'meet', 'sessionzeta', 'topicomega'])
      expect(dump.toLowerCase()).not.toContain(word);
    // And the same word under another key is another MAC: the index is keyed, not a plain hash.
    const other = new MasterKey(new Uint8Array(32).fill(8));
    expect(
      createMemoryStore({ db: s.db, domain: SealedStorage.open(s.db, other).domain('memory'), memoryKey: other.subkey('memory') }).idFor(
        'x',
      ),
    ).not.toBe(store.idFor('x'));
  });
});
