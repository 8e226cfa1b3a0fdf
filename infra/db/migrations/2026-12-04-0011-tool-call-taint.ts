/**
 * Untrusted content (issue "untrusted content cannot steer effects"): each tool call's row keeps
 * the untrusted sources the call was made after (`tainted_by`, a JSON array; null = none) and the
 * label of its result when that result is untrusted (`untrusted_output`; null = trusted). runTool
 * reads the labels of the results already in a turn's context, so a result the workflow was handed
 * by anyone but this worker, or one it forgot to count, cannot make a tainted turn look clean.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import type { Kysely } from 'kysely';

/** Adds the two columns. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tool_calls').addColumn('tainted_by', 'text').addColumn('untrusted_output', 'text').execute();
}

/** Drops them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('tool_calls').dropColumn('tainted_by').dropColumn('untrusted_output').execute();
}
