/**
 * The knowledge graph on both backends (issue 35): multi-hop queries ("who else works on the
 * projects my accountant is on?"), the predicate vocabulary, labels that follow a relation learned
 * from untrusted content into every result that uses it, and no entity name in the clear.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGraphTools } from '../../activities/tools/graph-tools.js';
import type { ToolImplementation } from '../../activities/tools/tool-implementation.js';
import type { RelationInput } from '../../core/tools/graph-write.js';
import { MasterKey } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { createGraphStore, type GraphStore } from '../../infra/graph-store.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';
import { toolContext } from '../support/tool-context.js';

const T0 = Date.UTC(2026, 11, 5, 9);
const STRANGER = 'a message from stranger@example.com on email (Untrusted)';

type Kind = RelationInput['subject']['kind'];
const rel = (s: string, sk: Kind, predicate: string, o: string, ok: Kind): RelationInput => ({
  subject: { name: s, kind: sk },
  predicate,
  object: { name: o, kind: ok },
});

/** The owner's world: Dana is the accountant; she works on Ledger and Payroll; others work on them too. */
const WORLD: RelationInput[] = [
  rel('me', 'person', 'has_accountant', 'Dana Reyes', 'person'),
  rel('Dana Reyes', 'person', 'works_on', 'Ledger', 'project'),
  rel('Dana Reyes', 'person', 'works_on', 'Payroll', 'project'),
  rel('Bob Okafor', 'person', 'works_on', 'Ledger', 'project'),
  rel('Carol Lin', 'person', 'works_on', 'Payroll', 'project'),
  rel('Carol Lin', 'person', 'works_on', 'Ledger', 'project'),
  rel('Eve Marsh', 'person', 'works_on', 'Garden', 'project'),
  rel('Bob Okafor', 'person', 'works_for', 'Acme Ltd', 'organisation'),
];

describe.each(openStorageBackends())('knowledge graph on $name', (backend) => {
  let s: OpenDatabase;
  let store: GraphStore;
  let write: ToolImplementation;
  let query: ToolImplementation;
  const master = new MasterKey(new Uint8Array(32).fill(5));

  beforeAll(async () => {
    s = await backend.open();
    store = createGraphStore({ db: s.db, domain: SealedStorage.open(s.db, master).domain('memory'), memoryKey: master.subkey('memory') });
    [write, query] = createGraphTools({ store, now: () => T0 }) as [ToolImplementation, ToolImplementation];
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    for (const t of ['sealed_records', 'graph_relations', 'graph_entities', 'graph_predicates'])
      await sql`delete from ${sql.table(t)}`.execute(s.db);
    expect(await write.run({ relations: WORLD }, toolContext())).toEqual({
      kind: 'completed',
      output: { stored: 8 },
      verified: 'NotApplicable',
    });
  });

  const names = (out: unknown) => ((out as { output: { answers: { name: string }[] } }).output.answers ?? []).map((a) => a.name).sort();

  it('answers "who else works on the projects my accountant is on?" with two hops from the accountant (three from me)', async () => {
    const twoHop = await query.run(
      { from: 'Dana Reyes', hops: [{ predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] },
      toolContext(),
    );
    expect(names(twoHop)).toEqual(['Bob Okafor', 'Carol Lin']);
    expect(twoHop).toMatchObject({ kind: 'completed', output: { more: false } });
    expect((twoHop as { untrusted?: string }).untrusted).toBeUndefined();
    const bob = (twoHop as { output: { answers: { name: string; kind: string; via: unknown[] }[] } }).output.answers.find(
      (a) => a.name === 'Bob Okafor',
    );
    expect(bob).toEqual({ name: 'Bob Okafor', kind: 'person', via: [{ name: 'Ledger', kind: 'project' }] });

    // From "me", spelled loosely: the name is found by its normalized form.
    const threeHop = await query.run(
      { from: ' ME ', hops: [{ predicate: 'has_accountant' }, { predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] },
      toolContext(),
    );
    expect(names(threeHop)).toEqual(['Bob Okafor', 'Carol Lin']);
    // Any predicate, bounded: limit and `more`.
    const any = await query.run({ from: 'bob okafor', hops: [{}], limit: 1 }, toolContext());
    expect(any).toMatchObject({ output: { more: true } });
    expect(names(any)).toHaveLength(1);
    expect(await query.run({ from: 'Nobody', hops: [{}] }, toolContext())).toMatchObject({ output: { answers: [], more: false } });
  });

  it('refuses depth over 3 and predicates outside the vocabulary; the owner extends the vocabulary', async () => {
    await expect(query.run({ from: 'me', hops: [{}, {}, {}, {}] }, toolContext())).rejects.toMatchObject({ kind: 'InvalidScope' });
    await expect(
      write.run({ relations: [rel('Dana Reyes', 'person', 'mentors', 'Bob Okafor', 'person')] }, toolContext()),
    ).rejects.toMatchObject({
      kind: 'InvalidScope',
      message: expect.stringContaining('"mentors" is not in the predicate vocabulary'),
    });
    await store.addPredicate('mentors');
    expect(await store.predicates()).toContain('mentors');
    await write.run({ relations: [rel('Dana Reyes', 'person', 'mentors', 'Bob Okafor', 'person')] }, toolContext());
    expect(names(await query.run({ from: 'Dana Reyes', hops: [{ predicate: 'mentors' }] }, toolContext()))).toEqual(['Bob Okafor']);
  });

  it('a relation learned from a stranger’s mail keeps its label; every result that follows it carries it, others do not', async () => {
    const poisoned = await write.run(
      { relations: [rel('Mallory Vance', 'person', 'works_on', 'Ledger', 'project')] },
      toolContext({ taint: [STRANGER] }),
    );
    expect(poisoned).toMatchObject({ kind: 'completed' });
    const who = await query.run(
      { from: 'Dana Reyes', hops: [{ predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] },
      toolContext(),
    );
    expect(names(who)).toEqual(['Bob Okafor', 'Carol Lin', 'Mallory Vance']);
    expect(who).toMatchObject({ untrusted: STRANGER });
    // A question that does not pass through it stays clean.
    const clean = await query.run({ from: 'Bob Okafor', hops: [{ predicate: 'works_for' }] }, toolContext());
    expect((clean as { untrusted?: string }).untrusted).toBeUndefined();

    // The same fact from the stranger again does not launder it; the owner stating it (trusted) vouches for it.
    await write.run(
      { relations: [rel('Mallory Vance', 'person', 'works_on', 'Ledger', 'project')] },
      toolContext({ taint: ['a page from x.example'] }),
    );
    expect(await query.run({ from: 'Mallory Vance', hops: [{}] }, toolContext())).toMatchObject({ untrusted: STRANGER });
    await write.run({ relations: [rel('Mallory Vance', 'person', 'works_on', 'Ledger', 'project')] }, toolContext());
    expect((await query.run({ from: 'Mallory Vance', hops: [{}] }, toolContext())) as object).not.toHaveProperty('untrusted');
  });

  it('of two paths to an answer, the one with fewer untrusted relations is shown; a question that meets none is clean', async () => {
    await write.run(
      {
        relations: [
          rel('Bob Okafor', 'person', 'works_on', 'Garden', 'project'),
          rel('Dana Reyes', 'person', 'works_on', 'Garden', 'project'),
        ],
      },
      toolContext({ taint: [STRANGER] }),
    );
    // Dana is reached from Bob through Ledger (trusted) and through Garden (untrusted); Eve only through Garden.
    const who = await query.run(
      { from: 'Bob Okafor', hops: [{ predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] },
      toolContext(),
    );
    const answers = (who as { output: { answers: { name: string; via: { name: string }[] }[] } }).output.answers;
    expect(answers.map((a) => a.name).sort()).toEqual(['Carol Lin', 'Dana Reyes', 'Eve Marsh']);
    expect(answers.find((a) => a.name === 'Dana Reyes')?.via).toEqual([{ name: 'Ledger', kind: 'project' }]);
    expect(who).toMatchObject({ untrusted: STRANGER });
    const clean = await query.run(
      { from: 'Carol Lin', hops: [{ predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] },
      toolContext(),
    );
    expect(names(clean)).toEqual(['Bob Okafor', 'Dana Reyes']);
    expect((clean as { untrusted?: string }).untrusted).toBeUndefined();
  });

  it('no entity name, and no label, is stored in the clear', async () => {
    await write.run({ relations: [rel('Mallory Vance', 'person', 'works_on', 'Ledger', 'project')] }, toolContext({ taint: [STRANGER] }));
    const rows = await sql<{ j: string }>`
      select row_to_json(t)::text as j from graph_entities t
      union all select row_to_json(t)::text from graph_relations t
      union all select row_to_json(t)::text from graph_predicates t
      union all select row_to_json(t)::text from sealed_records t`.execute(s.db);
    const dump = rows.rows
      .map((r) => r.j)
      .join('\n')
      .toLowerCase();
    expect(dump).toContain('works_on');
    for (const name of ['dana', 'reyes', 'bob', 'okafor', 'carol', 'ledger', 'payroll', 'acme', 'mallory', 'stranger', 'example.com'])
      expect(dump, name).not.toContain(name);
  });
});
