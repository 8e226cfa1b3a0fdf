/**
 * Every model call counts: a spend row per run and attempt of a step, not per step. A retried step,
 * or a turn workflow reset at the frontend (a new run of the same turn), called the model again and
 * spent again; with one row per step the later call overwrote the earlier one and the day's total
 * never grew. Existing rows become run '' attempt 1.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import { sql, type Kysely } from 'kysely';

/** Adds `run_id` and `attempt` to `llm_spend` and its key. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('llm_spend')
    .addColumn('run_id', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('llm_spend')
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await sql`alter table llm_spend drop constraint llm_spend_pk`.execute(db);
  await db.schema.alterTable('llm_spend').addPrimaryKeyConstraint('llm_spend_pk', ['turn_id', 'run_id', 'step', 'attempt']).execute();
}

/** Back to one row per step (keeping each step's last row). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from llm_spend a using llm_spend b where a.turn_id = b.turn_id and a.step = b.step and (a.run_id, a.attempt) < (b.run_id, b.attempt)`.execute(db);
  await sql`alter table llm_spend drop constraint llm_spend_pk`.execute(db);
  await db.schema.alterTable('llm_spend').dropColumn('attempt').execute();
  await db.schema.alterTable('llm_spend').dropColumn('run_id').execute();
  await db.schema.alterTable('llm_spend').addPrimaryKeyConstraint('llm_spend_pk', ['turn_id', 'step']).execute();
}
