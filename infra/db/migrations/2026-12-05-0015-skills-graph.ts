/**
 * Learned skills and the knowledge graph (issue 35, docs/SKILLS-AND-GRAPH.md). Nothing here is
 * plaintext a person wrote: skill names and entity names appear only as keyed HMACs, their text
 * lives in sealed records of the `memory` domain; predicates and entity kinds are vocabulary.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import type { Kysely } from 'kysely';

/** Creates `skills`, `graph_entities`, `graph_relations` and `graph_predicates`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('skills')
    .addColumn('name_mac', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    // SHA-256 of the canonical content; the approval MAC binds it to the gate that approved it.
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('approval_mac', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('skills_pkey', ['name_mac', 'version'])
    .execute();
  await db.schema
    .createTable('graph_entities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name_mac', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('graph_entities_name_idx').on('graph_entities').column('name_mac').execute();
  await db.schema
    .createTable('graph_relations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('predicate', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text', (c) => c.notNull())
    // Null: learned from trusted content; else the id of the sealed label of its untrusted sources.
    .addColumn('label_id', 'text')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  // A hop is an index range scan either way: out (subject → object) or in (object → subject).
  await db.schema.createIndex('graph_relations_out_idx').on('graph_relations').columns(['subject_id', 'predicate', 'object_id']).execute();
  await db.schema.createIndex('graph_relations_in_idx').on('graph_relations').columns(['object_id', 'predicate', 'subject_id']).execute();
  await db.schema
    .createTable('graph_predicates')
    .addColumn('predicate', 'text', (c) => c.primaryKey())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();
}

/** Drops the tables (the sealed names stay in `sealed_records`). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ['graph_predicates', 'graph_relations', 'graph_entities', 'skills']) await db.schema.dropTable(t).execute();
}
