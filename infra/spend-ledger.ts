/**
 * The spend ledger over `llm_spend` (migration 0013): what each call of a model used — a turn's step or a
 * quarantined read (0016) — summed per turn, session and day.
 */
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { SpendLedgerPort } from '../activities/ports.js';
import type { Spend } from '../core/spend.js';
import type { Database } from './db/index.js';

type SpendQuery = SelectQueryBuilder<Database, 'llm_spend', object>;

/** The summed spend of the rows `where` picks. */
async function totalOf(db: Kysely<Database>, where: (q: SpendQuery) => SpendQuery): Promise<Spend> {
  const t = await where(db.selectFrom('llm_spend'))
    .select([
      sql<string>`coalesce(sum(input_tokens), 0)`.as('input'),
      sql<string>`coalesce(sum(output_tokens), 0)`.as('output'),
      sql<number | null>`sum(cost_usd)`.as('cost'),
      sql<string>`count(*) filter (where cost_usd is null)`.as('unpriced'),
    ])
    .executeTakeFirstOrThrow();
  const unpriced = Number(t.unpriced);
  const spend: Spend = { inputTokens: Number(t.input), outputTokens: Number(t.output) };
  if (t.cost !== null) spend.costUsd = Number(t.cost);
  if (unpriced > 0) spend.unpricedSteps = unpriced;
  return spend;
}

/** A `SpendLedgerPort` over `llm_spend`. */
export function createSpendLedger(db: Kysely<Database>): SpendLedgerPort {
  return {
    async record(r) {
      const row = {
        session_key: r.sessionKey,
        day: r.day,
        model: r.model,
        input_tokens: r.usage.inputTokens,
        output_tokens: r.usage.outputTokens,
        cached_input_tokens: r.usage.cachedInputTokens ?? 0,
        cache_write_tokens: r.usage.cacheWriteTokens ?? 0,
        cost_usd: r.costUsd ?? null,
        kind: r.kind ?? 'step',
      };
      // One row per call of the model: a retried attempt or a reset run spent again and adds; the same
      // attempt recording twice (its activity retried after the write) does not. A step's reads are rows of their own.
      await db
        .insertInto('llm_spend')
        .values({ turn_id: r.turnId, run_id: r.runId, attempt: r.attempt, step: r.step, call_id: r.callId ?? '', ...row })
        .onConflict((oc) => oc.columns(['turn_id', 'run_id', 'step', 'attempt', 'call_id']).doUpdateSet(row))
        .execute();
    },
    dayTotal: (sessionKey, day) => totalOf(db, (q) => q.where('session_key', '=', sessionKey).where('day', '=', day)),
    turnTotal: (turnId, beforeStep) => totalOf(db, (q) => q.where('turn_id', '=', turnId).where('step', '<', beforeStep)),
    callTotal: (c) =>
      totalOf(db, (q) =>
        q.where('turn_id', '=', c.turnId).where('run_id', '=', c.runId).where('step', '=', c.step).where('call_id', '=', c.callId),
      ),
  };
}
