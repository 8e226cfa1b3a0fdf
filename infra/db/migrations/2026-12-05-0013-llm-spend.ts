/**
 * Spend budgets (issue "Outgrowing one machine", docs/BUDGETS.md): one row per LLM step with the
 * tokens it used and its cost, written by `llmStep` itself — the worker's own record, keyed by turn
 * and step so a retried step overwrites rather than adds. `openTurn` sums a session's rows of the
 * current UTC day to enforce the session-day budget. No user text: ids, a day and counts.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import type { Kysely } from 'kysely';

/** Creates `llm_spend` and its session-day index. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('llm_spend')
    .addColumn('turn_id', 'text', (c) => c.notNull())
    .addColumn('step', 'integer', (c) => c.notNull())
    .addColumn('session_key', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'integer', (c) => c.notNull())
    .addColumn('output_tokens', 'integer', (c) => c.notNull())
    .addColumn('cost_usd', 'double precision')
    .addPrimaryKeyConstraint('llm_spend_pk', ['turn_id', 'step'])
    .execute();
  await db.schema.createIndex('llm_spend_session_day').on('llm_spend').columns(['session_key', 'day']).execute();
}

/** Drops it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('llm_spend').execute();
}
