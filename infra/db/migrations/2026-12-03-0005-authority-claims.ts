/**
 * Authority claims (DESIGN.md D5): one row per verified, single-use authority — a turn request, a
 * mission definition, a gate, a gate decision, a one-shot grant's use. The primary key makes each
 * one usable once: the first workflow run to claim it holds it; a copy replayed in another run finds
 * the row taken. Rows hold no user text (hashes, scopes, tiers and ids only).
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import { sql, type Kysely } from 'kysely';

/** Creates `authority_claims`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('authority_claims')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('authority_claims_pkey', ['kind', 'subject'])
    .execute();
}

/** Drops the table (development only: in-flight workflows then lose their verified authority). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('authority_claims').execute();
}
