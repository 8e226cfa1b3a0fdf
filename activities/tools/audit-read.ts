/**
 * audit.read over a port returning the newest audit rows (infra/audit `tailAuditEntries`, and
 * `tailAuditEntriesOfSession` for the turn's own session). Without `allSessions` (scope
 * `audit.read:own-session`, the SemiTrusted ▲) only entries of turns that started in the turn's
 * own session are read; a call that does not know its session reads nothing. Filters by event
 * type, never returns more than `limit` (≤ AUDIT_READ_MAX_LIMIT) rows, and scans at most
 * {@link AUDIT_READ_SCAN} rows. Audit events hold hashes and scope strings, never raw tool input
 * or output; the MACs are left out (they are chain state, not information).
 */
import { AivyxError } from '../../core/errors.js';
import { auditReadTool } from '../../core/tools/config-tools.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** How many of the newest rows one call scans for matches. */
export const AUDIT_READ_SCAN = 1000;

/** One row as the port returns it (a subset of infra/audit's AuditRow). */
export interface AuditReadRow {
  seq: number;
  turnId: string | null;
  eventType: string;
  event: unknown;
  recordedAt: Date;
}

/** The newest `n` audit rows, oldest first (`(n) => tailAuditEntries(db, n)`). */
export interface AuditReader {
  tail(n: number): Promise<readonly AuditReadRow[]>;
  /** The newest `n` rows of turns whose `TurnStarted` names `sessionId`, oldest first. */
  tailOfSession(sessionId: string, n: number): Promise<readonly AuditReadRow[]>;
}

/** One entry of the output. */
export interface AuditReadEntry {
  seq: number;
  type: string;
  turnId: string | null;
  recordedAt: string;
  event: unknown;
}

/** Creates audit.read over `reader`. */
export function createAuditReadTool(deps: { reader: AuditReader }): ToolImplementation {
  return implementTool(auditReadTool, {
    async run(req, ctx) {
      const n = req.type === undefined ? req.limit : AUDIT_READ_SCAN;
      let rows: readonly AuditReadRow[];
      if (req.allSessions) rows = await deps.reader.tail(n);
      else if (ctx.sessionId !== undefined) rows = await deps.reader.tailOfSession(ctx.sessionId, n);
      else
        throw new AivyxError('Tool', 'audit.read: this call does not know its session, so it reads nothing', {
          detail: { tool: 'audit.read' },
          hint: 'read every session with allSessions:true (needs a wider grant)',
        });
      const matching = rows.filter((r) => req.type === undefined || r.eventType === req.type);
      const kept = matching.slice(-req.limit);
      const entries: AuditReadEntry[] = kept.map((r) => ({
        seq: r.seq,
        type: r.eventType,
        turnId: r.turnId,
        recordedAt: r.recordedAt.toISOString(),
        event: r.event,
      }));
      return { kind: 'completed', output: { entries, truncated: matching.length > kept.length }, verified: 'NotApplicable' };
    },
  });
}
