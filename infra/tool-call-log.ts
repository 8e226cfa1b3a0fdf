/**
 * The tool-call log over `tool_calls` (migration 0006) and its reconciliation with the audit log.
 *
 * Seed D1 commitment 5: "if the process crashes mid-turn, the audit log still tells the truth
 * about what got executed". `runTool` writes a row before the effect and the outcome after; the
 * `ToolCall` entry is appended from the row, under the row's lock, exactly once — by the turn's
 * `recordToolCall` step (retried until the database is back), by `finalizeTurn` for calls still
 * owed when the turn ends, or by the reconciliation that runs at start-up and in `audit verify`.
 */
import { sql, type Kysely } from 'kysely';
import {
  INTERRUPTED_OUTCOME,
  UNVERIFIABLE_OUTCOME,
  type ToolCallEnding,
  type ToolCallFacts,
  type ToolCallLogPort,
} from '../activities/ports.js';
import { unvouchedLabel } from '../core/taint.js';
import { appendAuditEntry, verifyAuditChain } from './audit/index.js';
import type { Database } from './db/index.js';

/** A `ToolCallLogPort` over `tool_calls`, appending entries under `auditKey`. */
export function createToolCallLog(db: Kysely<Database>, auditKey: Uint8Array): ToolCallLogPort {
  return {
    async begin(f) {
      const inserted = await db
        .insertInto('tool_calls')
        .values({ ...rowOf(f), state: 'running', outcome: null, finished_at: null, untrusted_output: null })
        .onConflict((oc) => oc.column('idem_key').doNothing())
        .returning('idem_key')
        .executeTakeFirst();
      if (inserted) return { state: 'new' };
      const row = await db
        .selectFrom('tool_calls')
        .select(['state', 'outcome'])
        .where('idem_key', '=', f.idemKey)
        .executeTakeFirstOrThrow();
      return row.state === 'done' ? { state: 'done', outcome: row.outcome ?? INTERRUPTED_OUTCOME } : { state: 'running' };
    },
    audit: (f, ending) => auditToolCall(db, auditKey, f, ending),
    async contextLabels(keys) {
      if (keys.length === 0) return { untrusted: [], unrecorded: [], delegated: [] };
      const rows = await db
        .selectFrom('tool_calls')
        .select(['idem_key', 'turn_id', 'state', 'tool', 'outcome', 'untrusted_output'])
        .where('idem_key', 'in', [...keys])
        .execute();
      const done = rows.filter((r) => r.state === 'done');
      // A row closed without runTool's receipt: the result the workflow holds for it did not come from this worker.
      const unvouched = (outcome: string | null) =>
        outcome === null || outcome === INTERRUPTED_OUTCOME || outcome === UNVERIFIABLE_OUTCOME || outcome.startsWith('NotRun(');
      const labels = done.flatMap((r) => [
        ...(r.untrusted_output ? [r.untrusted_output] : []),
        ...(unvouched(r.outcome) ? [unvouchedLabel(r.tool)] : []),
      ]);
      const recorded = new Set(done.map((r) => r.idem_key));
      const delegated = await specialistReads(
        db,
        done.filter((r) => r.tool === DELEGATE_TOOL),
      );
      return { untrusted: [...new Set(labels)], unrecorded: keys.filter((k) => !recorded.has(k)), delegated };
    },
    async callTaint(turns, tool, hash) {
      if (turns.length === 0) return [];
      const rows = await db
        .selectFrom('tool_calls')
        .select('tainted_by')
        .where('tool', '=', tool)
        .where('input_hash', '=', hash)
        .where('tainted_by', 'is not', null)
        .where((eb) => eb.or(turns.flatMap((t) => [eb('turn_id', '=', t), eb('turn_id', 'like', `${likeEscaped(t)}/%`)])))
        .execute();
      return [...new Set(rows.flatMap((r) => JSON.parse(r.tainted_by ?? '[]') as string[]))];
    },
  };
}

/** The columns a call's facts decide, as its row holds them (no audit entry yet). */
function rowOf(f: ToolCallFacts) {
  return {
    idem_key: f.idemKey,
    turn_id: f.turnId,
    call_id: f.callId,
    tool: f.tool,
    scope: f.scope,
    input_hash: f.inputHash,
    audit_seq: null,
    tainted_by: f.taintedBy?.length ? JSON.stringify(f.taintedBy) : null,
  };
}

/** The tool whose result is a specialist's answer (its child turns run under ids its key derives). */
const DELEGATE_TOOL = 'agent.delegate';

/**
 * The untrusted sources read by the specialists of these `agent.delegate` calls, and by theirs: each
 * child's turn id extends its lead's with the call's activity id (core/specialists.ts `delegateChildId`).
 */
async function specialistReads(db: Kysely<Database>, delegations: readonly { idem_key: string; turn_id: string }[]): Promise<string[]> {
  if (delegations.length === 0) return [];
  const prefixes = delegations.map((d) => `${d.turn_id}/${d.idem_key.slice(d.idem_key.lastIndexOf('/') + 1)}/`);
  const rows = await db
    .selectFrom('tool_calls')
    .select('untrusted_output')
    .where('state', '=', 'done')
    .where('untrusted_output', 'is not', null)
    .where((eb) => eb.or(prefixes.map((p) => eb('turn_id', 'like', `${likeEscaped(p)}%`))))
    .execute();
  return [...new Set(rows.flatMap((r) => (r.untrusted_output ? [r.untrusted_output] : [])))];
}

/** `text` as a LIKE pattern that matches only itself (turn ids may hold `_`). */
function likeEscaped(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Appends the `ToolCall` entry of one call exactly once (see `ToolCallLogPort.audit`). */
export async function auditToolCall(
  db: Kysely<Database>,
  auditKey: Uint8Array,
  f: ToolCallFacts,
  ending: ToolCallEnding,
): Promise<{ outcome: string; seq: number } | undefined> {
  return db.transaction().execute(async (trx) => {
    // A call that never reached runTool's first write (refused, or its activity never ran) gets a
    // finished row now: a late runTool attempt then finds it and runs nothing.
    await trx
      .insertInto('tool_calls')
      .values({
        ...rowOf(f),
        state: 'done',
        outcome: ending.known ?? ending.missing,
        finished_at: new Date(),
        untrusted_output: f.untrustedOutput ?? null,
      })
      .onConflict((oc) => oc.column('idem_key').doNothing())
      .execute();
    const row = await trx.selectFrom('tool_calls').selectAll().where('idem_key', '=', f.idemKey).forUpdate().executeTakeFirstOrThrow();
    if (row.audit_seq !== null) return { outcome: row.outcome ?? INTERRUPTED_OUTCOME, seq: Number(row.audit_seq) };
    // The first recorded outcome stands: a late attempt never rewrites what was recorded.
    const outcome = row.state === 'done' && row.outcome !== null ? row.outcome : (ending.known ?? ending.running);
    if (outcome === undefined) return undefined;
    const finishedAt = row.finished_at ?? new Date();
    const { seq } = await appendAuditEntry(trx, auditKey, {
      idemKey: f.idemKey,
      event: {
        type: 'ToolCall',
        turnId: row.turn_id,
        callId: row.call_id,
        toolId: row.tool,
        scopeUsed: row.scope,
        inputHash: row.input_hash,
        outcome,
        durationMs: Math.max(0, finishedAt.getTime() - row.started_at.getTime()),
        ...(row.tainted_by ? { taintedBy: JSON.parse(row.tainted_by) as string[] } : {}),
      },
    });
    await trx
      .updateTable('tool_calls')
      // The first label stands, like the first outcome: a late attempt never makes a result look trusted.
      .set({
        state: 'done',
        outcome,
        finished_at: finishedAt,
        audit_seq: seq,
        untrusted_output: row.untrusted_output ?? f.untrustedOutput ?? null,
      })
      .where('idem_key', '=', f.idemKey)
      .execute();
    return { outcome, seq };
  });
}

/** A row still running after this long is given up on: no runTool attempt lives that long (30 min × 3 attempts). */
export const STALE_RUNNING_MS = 2 * 3_600_000;

/** One disagreement between the tool-call log, the intent table and the audit log. */
export interface ReconcileFinding {
  kind: 'owed-entry' | 'intent-without-entry' | 'tool-call-count';
  turnId: string;
  /** The call (idempotency key) or turn it is about, and what was found. */
  what: string;
}

/** What a reconciliation found and wrote. */
export interface ReconcileReport {
  /** Owed `ToolCall` entries written now (calls of turns that have ended). */
  written: number;
  /** Disagreements left (owed entries of turns still running are not findings). */
  findings: ReconcileFinding[];
}

/**
 * Writes the owed `ToolCall` entries of turns that have ended (when `write`), then reports what
 * still disagrees: intents started with no entry, and `TurnEnded.toolCallsMade` that does not match
 * the turn's `ToolCall` entries.
 */
export async function reconcileToolCalls(db: Kysely<Database>, auditKey: Uint8Array, opts: { write: boolean }): Promise<ReconcileReport> {
  let written = 0;
  const findings: ReconcileFinding[] = [];
  const owed = await db
    .selectFrom('tool_calls as c')
    .select(['c.idem_key', 'c.turn_id', 'c.call_id', 'c.tool', 'c.scope', 'c.input_hash', 'c.state'])
    .where('c.audit_seq', 'is', null)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('audit_entries as e').select('e.seq').whereRef('e.turn_id', '=', 'c.turn_id').where('e.event_type', '=', 'TurnEnded'),
      ),
    )
    // A running row may belong to an attempt still working (a tool outlives a timed-out turn): only a stale one is given up on.
    .where((eb) => eb.or([eb('c.state', '=', 'done'), eb('c.started_at', '<', new Date(Date.now() - STALE_RUNNING_MS))]))
    .orderBy('c.started_at')
    .execute();
  for (const r of owed) {
    if (opts.write) {
      await auditToolCall(
        db,
        auditKey,
        { idemKey: r.idem_key, turnId: r.turn_id, callId: r.call_id, tool: r.tool, scope: r.scope, inputHash: r.input_hash },
        { running: INTERRUPTED_OUTCOME, missing: INTERRUPTED_OUTCOME },
      );
      written++;
    } else {
      findings.push({
        kind: 'owed-entry',
        turnId: r.turn_id,
        what: `tool call ${r.idem_key} (${r.tool}, ${r.state}) has no ToolCall entry although its turn ended`,
      });
    }
  }
  // At-most-once tools claim an intent under the same key as their call: a started intent with no entry is an unaudited effect.
  const intents = await db
    .selectFrom('tool_intents as i')
    .leftJoin('audit_entries as e', 'e.idem_key', 'i.idem_key')
    .select(['i.idem_key', 'i.tool', 'i.state'])
    .where('e.seq', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('tool_calls as c').select('c.idem_key').whereRef('c.idem_key', '=', 'i.idem_key').where('c.audit_seq', 'is', null),
        ),
      ),
    )
    .execute();
  for (const i of intents)
    findings.push({
      kind: 'intent-without-entry',
      turnId: i.idem_key.split('/')[0] ?? i.idem_key,
      what: `intent ${i.idem_key} (${i.tool}, ${i.state}) has no ToolCall entry`,
    });

  // Turns with a call still running (not yet stale) are not counted yet: its entry comes when it finishes.
  const counts = await sql<{ turn_id: string; made: string; entries: string }>`
    select e.turn_id, (e.event::jsonb ->> 'toolCallsMade') as made,
      (select count(*) from audit_entries c where c.turn_id = e.turn_id and c.event_type = 'ToolCall') as entries
    from audit_entries e where e.event_type = 'TurnEnded'
      and not exists (select 1 from tool_calls r where r.turn_id = e.turn_id and r.audit_seq is null and r.state = 'running' and r.started_at >= ${new Date(Date.now() - STALE_RUNNING_MS)})`.execute(
    db,
  );
  for (const c of counts.rows) {
    if (Number(c.made) !== Number(c.entries))
      findings.push({
        kind: 'tool-call-count',
        turnId: c.turn_id,
        what: `TurnEnded of ${c.turn_id} says ${c.made} tool call(s) but the log has ${c.entries} ToolCall entr${Number(c.entries) === 1 ? 'y' : 'ies'}`,
      });
  }
  return { written, findings };
}

/** A verify report with the reconciliation of tool calls and intents folded in. */
export type ReconciledReport<V> = V & { reconciliation: ReconcileReport; failed?: string; reason?: string };

/**
 * `aivyx audit verify`: writes entries still owed by turns that ended (an owed entry is a fact the
 * log must hold), then verifies (the chain alone by default; the full audit service's chain, tree
 * and checkpoints when given), and reports every remaining disagreement by name — `ok` only when
 * there is none.
 */
export async function verifyAuditLog<V extends { ok: boolean }>(
  db: Kysely<Database>,
  auditKey: Uint8Array,
  verify: () => Promise<V> = () => verifyAuditChain(db, auditKey) as Promise<never>,
): Promise<ReconciledReport<V>> {
  const reconciliation = await reconcileToolCalls(db, auditKey, { write: true });
  const report = await verify();
  if (!report.ok || reconciliation.findings.length === 0) return { ...report, reconciliation };
  const first = reconciliation.findings[0]!;
  return {
    ...report,
    ok: false,
    failed: 'reconciliation',
    reason: `${reconciliation.findings.length} disagreement(s) between tool calls and the log; first: ${first.what}`,
    reconciliation,
  };
}

/** The audit service with its `verify` reconciling tool calls and intents first (what the CLI and REST serve). */
export function reconciledAuditService<S extends { verify(o?: { checkpoint?: string; source?: string }): Promise<{ ok: boolean }> }>(
  service: S,
  db: Kysely<Database>,
  auditKey: Uint8Array,
): S {
  return { ...service, verify: (o?: { checkpoint?: string; source?: string }) => verifyAuditLog(db, auditKey, () => service.verify(o)) };
}
