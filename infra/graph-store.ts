/**
 * The knowledge graph behind graph.* (docs/SKILLS-AND-GRAPH.md). Entity names are sealed records
 * `graph/entity/<id>` in the `memory` domain; the tables hold them only as keyed HMACs of the
 * normalized name (lookup) and of kind + name (the id). Relations join entity ids, so a traversal is
 * plain indexed SQL; only the entities of the returned answers are opened. A relation learned after
 * untrusted content points at a sealed label `graph/label/<id>`; a result carries the union of
 * the labels on its paths.
 */
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { hmacSha256Hex } from '../core/canonical-json.js';
import { AivyxError } from '../core/errors.js';
import { DEFAULT_PREDICATES, PREDICATE, normalizeEntityName, type EntityRef } from '../core/tools/graph-fields.js';
import type { RelationInput } from '../core/tools/graph-write.js';
import type { GraphAnswer, GraphEntity, GraphQueryResult, GraphStore } from '../activities/tools/graph-port.js';
import type { Database } from './db/database.js';
import type { DomainHandle } from './storage/index.js';

export type { GraphStore, GraphQueryResult, GraphAnswer, GraphEntity };

/** The store's ports: the sealed `memory` domain, the database, and the memory subkey (its own keys derive from it). */
export interface GraphStoreDeps {
  db: Kysely<Database>;
  domain: Pick<DomainHandle, 'getJson' | 'putJson'>;
  /** `master.subkey('memory')`; never used directly. */
  memoryKey: Uint8Array;
}

const SALT = utf8ToBytes('aivyx-v1-graph');
/** Sealed puts in flight at once during a bulk write. */
const PUT_CONCURRENCY = 8;
/** Rows per INSERT statement (well under PostgreSQL's bind-parameter limit). */
const INSERT_ROWS = 2000;

const entityKey = (id: string) => `graph/entity/${id}`;
const labelKey = (id: string) => `graph/label/${id}`;

/** Runs `fn` over `items` with at most `n` in flight. */
async function eachLimited<T>(items: readonly T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane));
}

/** Creates the store. */
export function createGraphStore(deps: GraphStoreDeps): GraphStore & {
  /** Bulk import (benchmarks): relations with no label, entities sealed concurrently. */
  writeMany(relations: readonly RelationInput[], at: number): Promise<void>;
} {
  const { db, domain } = deps;
  if (!(deps.memoryKey instanceof Uint8Array) || deps.memoryKey.length !== 32)
    throw new AivyxError('Config', 'the graph store needs the 32-byte memory subkey', { hint: "pass master.subkey('memory')" });
  const indexKey = hkdf(sha256, deps.memoryKey, SALT, utf8ToBytes('blind-index'), 32);
  // Prefixes separate the MAC spaces: an entity id never equals a name MAC or a relation id.
  const mac = (kind: string, ...parts: string[]) => hmacSha256Hex(indexKey, [kind, ...parts].join('\u0000')).slice(0, 32);
  const nameMac = (name: string) => mac('name', normalizeEntityName(name));
  const entityId = (e: EntityRef) => `e_${mac('entity', e.kind, normalizeEntityName(e.name))}`;

  async function vocabulary(): Promise<Set<string>> {
    const added = await db.selectFrom('graph_predicates').select('predicate').execute();
    return new Set([...DEFAULT_PREDICATES, ...added.map((r) => r.predicate)]);
  }

  /** Seals the names of entities not yet stored, then indexes them (a crash in between re-seals on retry). */
  async function ensureEntities(entities: readonly EntityRef[], at: number): Promise<void> {
    const byId = new Map(entities.map((e) => [entityId(e), e]));
    const ids = [...byId.keys()];
    const known = new Set<string>();
    for (let i = 0; i < ids.length; i += INSERT_ROWS) {
      const rows = await db
        .selectFrom('graph_entities')
        .select('id')
        .where('id', 'in', ids.slice(i, i + INSERT_ROWS))
        .execute();
      for (const r of rows) known.add(r.id);
    }
    const fresh = ids.filter((id) => !known.has(id));
    await eachLimited(fresh, PUT_CONCURRENCY, (id) => {
      const e = byId.get(id)!;
      return domain.putJson(entityKey(id), { name: e.name, kind: e.kind });
    });
    for (let i = 0; i < fresh.length; i += INSERT_ROWS) {
      const values = fresh.slice(i, i + INSERT_ROWS).map((id) => {
        const e = byId.get(id)!;
        return { id, name_mac: nameMac(e.name), kind: e.kind, created_at_ms: at };
      });
      await db
        .insertInto('graph_entities')
        .values(values)
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
  }

  async function insertRelations(relations: readonly RelationInput[], at: number, labelId: string | null): Promise<void> {
    const rows = relations.map((r) => {
      const s = entityId(r.subject);
      const o = entityId(r.object);
      return {
        id: `r_${mac('relation', s, r.predicate, o)}`,
        subject_id: s,
        predicate: r.predicate,
        object_id: o,
        label_id: labelId,
        created_at_ms: at,
      };
    });
    const unique = [...new Map(rows.map((r) => [r.id, r])).values()];
    for (let i = 0; i < unique.length; i += INSERT_ROWS) {
      await db
        .insertInto('graph_relations')
        .values(unique.slice(i, i + INSERT_ROWS))
        // A trusted write vouches for a fact learned earlier from untrusted content; an untrusted one never launders a trusted fact.
        .onConflict((oc) =>
          oc
            .column('id')
            .doUpdateSet({ label_id: sql<string | null>`case when excluded.label_id is null then null else graph_relations.label_id end` }),
        )
        .execute();
    }
  }

  /** Opens sealed JSON records by id, in parallel. */
  async function openAll<T>(ids: Iterable<string>, key: (id: string) => string): Promise<Map<string, T>> {
    const out = new Map<string, T>();
    await Promise.all(
      [...new Set(ids)].map(async (id) => {
        const v = await domain.getJson<T>(key(id));
        if (v !== undefined) out.set(id, v);
      }),
    );
    return out;
  }

  return {
    async write(relations, opts) {
      const known = await vocabulary();
      const unknown = relations.find((r) => !known.has(r.predicate));
      if (unknown)
        throw new AivyxError('InvalidScope', `graph.write: "${unknown.predicate}" is not in the predicate vocabulary`, {
          detail: { tool: 'graph.write' },
          hint: `use one of ${[...known].sort().join(', ')}; the owner adds predicates with \`aivyx graph predicates add\``,
        });
      await ensureEntities(
        relations.flatMap((r) => [r.subject, r.object]),
        opts.at,
      );
      let labelId: string | null = null;
      if (opts.untrusted) {
        labelId = `l_${mac('label', opts.untrusted)}`;
        await domain.putJson(labelKey(labelId), { label: opts.untrusted });
      }
      await insertRelations(relations, opts.at, labelId);
      return { stored: relations.length };
    },

    async writeMany(relations, at) {
      await ensureEntities(
        relations.flatMap((r) => [r.subject, r.object]),
        at,
      );
      await insertRelations(relations, at, null);
    },

    async query(input) {
      let starts = db.selectFrom('graph_entities').select('id').where('name_mac', '=', nameMac(input.from));
      if (input.kind) starts = starts.where('kind', '=', input.kind);
      const startIds = (await starts.execute()).map((r) => r.id);
      if (startIds.length === 0) return { answers: [], more: false, labels: [] };
      const rows = await traverse(db, startIds, input.hops, input.limit + 1);
      const depth = input.hops.length;
      const kept = rows.slice(0, input.limit);
      const entities = await openAll<GraphEntity>(
        kept.flatMap((r) => Array.from({ length: depth }, (_, i) => r[`e${i + 1}`] as string)),
        entityKey,
      );
      const labelIds = kept.flatMap((r) =>
        Array.from({ length: depth }, (_, i) => r[`l${i + 1}`]).filter((l): l is string => typeof l === 'string'),
      );
      const labels = await openAll<{ label: string }>(labelIds, labelKey);
      const view = (id: string): GraphEntity | undefined => {
        const e = entities.get(id);
        return e && { name: e.name, kind: e.kind };
      };
      const answers: GraphAnswer[] = [];
      for (const r of kept) {
        const path = Array.from({ length: depth }, (_, i) => view(r[`e${i + 1}`] as string));
        const end = path.at(-1);
        // An entity whose sealed name is gone (forgotten mid-query) is skipped, never shown as an id.
        if (!end || path.some((p) => p === undefined)) continue;
        answers.push({ ...end, via: path.slice(0, -1) as GraphEntity[] });
      }
      return { answers, more: rows.length > input.limit, labels: [...new Set([...labels.values()].map((l) => l.label))] };
    },

    async predicates() {
      return [...(await vocabulary())].sort();
    },

    async addPredicate(predicate) {
      if (!PREDICATE.test(predicate))
        throw new AivyxError('InvalidScope', `"${predicate}" is not a predicate`, { hint: 'lower-case snake_case, e.g. "mentors"' });
      await db
        .insertInto('graph_predicates')
        .values({ predicate, created_at_ms: Date.now() })
        .onConflict((oc) => oc.doNothing())
        .execute();
    },
  };
}

/** The hop's columns: `out` walks subject → object, `in` object → subject. */
function ends(direction: 'out' | 'in'): { from: string; to: string } {
  return direction === 'out' ? { from: 'subject_id', to: 'object_id' } : { from: 'object_id', to: 'subject_id' };
}

/**
 * One row per answer: the entities `e1..eN` along the path and each hop's label `l1..lN`. An answer
 * is never an entity already on its path (nor the start); of several paths to it, the one with the
 * fewest untrusted relations is kept. Identifiers come from a fixed set; every value is bound.
 */
async function traverse(
  db: Kysely<Database>,
  startIds: readonly string[],
  hops: readonly { predicate?: string; direction: 'out' | 'in' }[],
  cap: number,
): Promise<Record<string, unknown>[]> {
  const n = hops.length;
  const joins: RawBuilder<unknown>[] = [];
  const where: RawBuilder<unknown>[] = [sql`r1.${sql.ref(ends(hops[0]!.direction).from)} in (${sql.join(startIds)})`];
  hops.forEach((hop, i) => {
    const r = `r${i + 1}`;
    const { from } = ends(hop.direction);
    if (i > 0)
      joins.push(
        sql`join graph_relations ${sql.raw(r)} on ${sql.ref(`${r}.${from}`)} = ${sql.ref(`r${i}.${ends(hops[i - 1]!.direction).to}`)}`,
      );
    if (hop.predicate !== undefined) where.push(sql`${sql.ref(`${r}.predicate`)} = ${hop.predicate}`);
  });
  const endOf = (i: number) => sql.ref(`r${i}.${ends(hops[i - 1]!.direction).to}`);
  const last = endOf(n);
  where.push(sql`${last} not in (${sql.join(startIds)})`);
  for (let i = 1; i < n; i++) where.push(sql`${last} <> ${endOf(i)}`);
  const cols = Array.from(
    { length: n },
    (_, i) => sql`${endOf(i + 1)} as ${sql.raw(`e${i + 1}`)}, ${sql.ref(`r${i + 1}.label_id`)} as ${sql.raw(`l${i + 1}`)}`,
  );
  const untrustedHops = sql.join(
    Array.from({ length: n }, (_, i) => sql`(case when ${sql.ref(`r${i + 1}.label_id`)} is null then 0 else 1 end)`),
    sql` + `,
  );
  const query = sql<Record<string, unknown>>`
    select distinct on (${last}) ${sql.join(cols)}
    from graph_relations r1 ${sql.join(joins, sql` `)}
    where ${sql.join(where, sql` and `)}
    order by ${last}, ${untrustedHops}
    limit ${cap}`;
  return (await query.execute(db)).rows;
}
