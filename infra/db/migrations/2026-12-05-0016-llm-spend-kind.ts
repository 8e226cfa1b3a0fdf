/**
 * Quarantined reads count: `value.read` asks a tool-less model once per read, and that call is a
 * spend row of its own. `kind` says what the model was called for (`step`: a turn's model step;
 * `quarantined-read`) and `call_id` which tool call asked (empty for a step); the key takes the
 * call, so a step's reads and the step itself are rows apart. Existing rows are steps.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import { sql, type Kysely } from 'kysely';

/** Adds `kind` and `call_id` to `llm_spend` and `call_id` to its key. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('llm_spend')
    .addColumn('kind', 'text', (c) => c.notNull().defaultTo('step'))
    .execute();
  await db.schema
    .alterTable('llm_spend')
    .addColumn('call_id', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`alter table llm_spend drop constraint llm_spend_pk`.execute(db);
  await db.schema
    .alterTable('llm_spend')
    .addPrimaryKeyConstraint('llm_spend_pk', ['turn_id', 'run_id', 'step', 'attempt', 'call_id'])
    .execute();
}

/** Back to steps only: the reads' rows go (0014's key has no room for them). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from llm_spend where call_id <> ''`.execute(db);
  await sql`alter table llm_spend drop constraint llm_spend_pk`.execute(db);
  await db.schema.alterTable('llm_spend').dropColumn('call_id').execute();
  await db.schema.alterTable('llm_spend').dropColumn('kind').execute();
  await db.schema.alterTable('llm_spend').addPrimaryKeyConstraint('llm_spend_pk', ['turn_id', 'run_id', 'step', 'attempt']).execute();
}
