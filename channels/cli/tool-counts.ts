/**
 * Honest tool counts for the line that ends a turn: the outcome's `toolCallsMade` counts the calls the
 * turn scheduled, and a call can fail where no stream event says so (its scope not resolvable, a worker
 * refusal) or be refused by the scope check before it is scheduled at all. The audit log records each
 * (`ToolCall` with its outcome, `ScopeDenied`), so the CLI counts from there.
 */
import { toolSummaryFailed } from '../outcome-text.js';
import { restJson, type RestTarget } from './rest-client.js';

/** What the audit log says a turn's tool calls came to besides those that ran and succeeded. */
export interface ToolCounts {
  /** Calls that were scheduled and failed (or were refused by the worker). */
  failed: number;
  /** Calls the scope check refused before they were scheduled (not in `toolCallsMade`). */
  refused: number;
}

/** How far back the newest audit entries are read for a turn that has just ended. */
const RECENT_ENTRIES = 500;

/** The turn's counts from the audit log's newest entries; undefined when the log cannot be read here. */
export async function auditedToolCounts(target: RestTarget, turnId: string): Promise<ToolCounts | undefined> {
  try {
    const rows = (await restJson(target, 'GET', `/v1/audit/tail?n=${RECENT_ENTRIES}`)) as {
      turnId: string;
      eventType: string;
      event: { outcome?: string };
    }[];
    const mine = rows.filter((r) => r.turnId === turnId);
    return {
      failed: mine.filter((r) => r.eventType === 'ToolCall' && toolSummaryFailed(r.event.outcome ?? '')).length,
      refused: mine.filter((r) => r.eventType === 'ScopeDenied').length,
    };
  } catch {
    return undefined;
  }
}
