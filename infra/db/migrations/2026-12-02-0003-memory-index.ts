/**
 * The memory blind index (docs/MEMORY.md): one row per (token MAC, memory id). Entries
 * themselves are sealed records in the `memory` domain; this table holds no plaintext, only
 * HMACs of normalized tokens and of the entry's tags, plus the entry's creation time.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import type { Kysely } from 'kysely';

/** Creates `memory_tokens` and its time index. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('memory_tokens')
    .addColumn('token_mac', 'text', (c) => c.notNull())
    .addColumn('memory_key', 'text', (c) => c.notNull())
    // Denormalized onto every row so "tokens in a time range" is one index range scan.
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('memory_tokens_pkey', ['token_mac', 'memory_key'])
    .execute();
  // The pseudo-tokens (every entry, per session, per topic, public) are queried by time: newest first.
  await db.schema.createIndex('memory_tokens_time_idx').on('memory_tokens').columns(['token_mac', 'created_at_ms']).execute();
}

/** Drops the index table (the sealed entries stay; re-indexing them rebuilds it). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('memory_tokens').execute();
}
