/**
 * Authority claims over `authority_claims` (DESIGN.md D5): the durable half of "usable once where
 * it is meant to be used once". A verified turn request, mission, gate decision or one-shot grant
 * is claimed by the workflow run that uses it; a retried activity of that run finds its own claim
 * again, while a copy replayed by another run (a new workflow id, or the same id started again)
 * finds it taken. Queries are plain functions of a kysely handle.
 */
import type { Kysely, Transaction } from 'kysely';
import type { ClaimPort, ClaimResult, HeldClaim } from '../activities/ports.js';
import { canonicalJson } from './crypto/index.js';
import type { Database } from './db/index.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Claims `kind`/`subject` for a workflow run; idempotent for that run, refused for any other. */
export async function claimAuthority<T>(
  db: Db,
  c: { kind: string; subject: string; workflowId: string; runId: string; data: T },
): Promise<ClaimResult<T>> {
  const inserted = await db
    .insertInto('authority_claims')
    .values({ kind: c.kind, subject: c.subject, workflow_id: c.workflowId, run_id: c.runId, data: canonicalJson(c.data) })
    .onConflict((oc) => oc.columns(['kind', 'subject']).doNothing())
    .returning('kind')
    .executeTakeFirst();
  if (inserted) return { status: 'claimed', data: c.data };
  const held = await readClaim<T>(db, c.kind, c.subject);
  if (!held) throw new Error(`authority claim ${c.kind}/${c.subject} vanished while being claimed`);
  if (held.workflowId === c.workflowId && held.runId === c.runId) return { status: 'held', data: held.data };
  return { status: 'taken', by: { workflowId: held.workflowId, runId: held.runId }, data: held.data };
}

/** The claim on `kind`/`subject`, if any. */
export async function readClaim<T>(db: Db, kind: string, subject: string): Promise<HeldClaim<T> | undefined> {
  const row = await db
    .selectFrom('authority_claims')
    .select(['workflow_id', 'run_id', 'data'])
    .where('kind', '=', kind)
    .where('subject', '=', subject)
    .executeTakeFirst();
  return row ? { workflowId: row.workflow_id, runId: row.run_id, data: JSON.parse(row.data) as T } : undefined;
}

/** Hands a claim from one run of a workflow to the next (continue-as-new); false when `from` does not hold it. */
export async function moveClaim(
  db: Db,
  kind: string,
  subject: string,
  from: { workflowId: string; runId: string },
  toRunId: string,
): Promise<boolean> {
  if (from.runId === toRunId) return (await readClaim(db, kind, subject))?.runId === toRunId;
  const res = await db
    .updateTable('authority_claims')
    .set({ run_id: toRunId })
    .where('kind', '=', kind)
    .where('subject', '=', subject)
    .where('workflow_id', '=', from.workflowId)
    .where('run_id', '=', from.runId)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return true;
  // A retried hand-over finds the claim already moved to this run.
  return (await readClaim(db, kind, subject))?.runId === toRunId;
}

/** A `ClaimPort` over the database. */
export function createClaimPort(db: Kysely<Database>): ClaimPort {
  return {
    claim: (c) => claimAuthority(db, c),
    read: (kind, subject) => readClaim(db, kind, subject),
    move: (kind, subject, from, toRunId) => moveClaim(db, kind, subject, from, toRunId),
  };
}
