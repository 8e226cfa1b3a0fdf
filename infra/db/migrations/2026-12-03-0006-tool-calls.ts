/**
 * The tool-call log (issue "faults lose nothing"): `runTool` writes a row before a tool's effect
 * and its outcome after, separately from the audit entry, so a database blip after an effect can
 * never turn a real result into a failure or leave the effect unaudited: `recordToolCall` (and the
 * start-up reconciliation) write the `ToolCall` entry from this row and store its sequence number.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import { sql, type Kysely } from 'kysely';

/** Creates `tool_calls`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('tool_calls')
    // workflow id / run id / activity id of the runTool activity (never the attempt): also the audit key.
    .addColumn('idem_key', 'text', (c) => c.primaryKey())
    .addColumn('turn_id', 'text', (c) => c.notNull())
    .addColumn('call_id', 'text', (c) => c.notNull())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('input_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('running', 'done')`))
    // The outcome summary (as the audit log writes it), never output bodies.
    .addColumn('outcome', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    // Set once the ToolCall entry is in the audit log; null = the entry is still owed.
    .addColumn('audit_seq', 'bigint')
    .execute();
  await db.schema.createIndex('tool_calls_owed_idx').on('tool_calls').column('turn_id').where(sql.ref('audit_seq'), 'is', null).execute();
}

/** Drops the table. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tool_calls').execute();
}
