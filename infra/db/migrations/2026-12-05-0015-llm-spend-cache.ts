/**
 * A step's input tokens, split: how many the provider served from its prompt cache and how many it
 * wrote to it (docs/LLM-PROVIDERS.md). `input_tokens` stays every input token; existing rows are 0/0.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import type { Kysely } from 'kysely';

/** Adds `cached_input_tokens` and `cache_write_tokens` to `llm_spend`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('llm_spend')
    .addColumn('cached_input_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('llm_spend')
    .addColumn('cache_write_tokens', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

/** Drops the two columns. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('llm_spend').dropColumn('cache_write_tokens').execute();
  await db.schema.alterTable('llm_spend').dropColumn('cached_input_tokens').execute();
}
