/** Seed D3 outcome types: what a tool call and a whole turn can end as. */
import type { AivyxErrorData } from './errors.js';
import type { BudgetBreach, Spend } from './spend.js';

/** Whether a tool confirmed that its intended effect happened (not just that it returned). */
export type Verification = 'Verified' | 'Unverified' | 'NotApplicable';

/** The result of one tool call, as the model and the audit log see it. */
export type ToolOutcome =
  | { status: 'Completed'; output: unknown; verified: Verification }
  | { status: 'Denied'; scope: string; held: string[] }
  | { status: 'RequiresEscalation'; reason: string }
  | { status: 'Failed'; error: AivyxErrorData };

/**
 * The five ways a turn ends. Durations are milliseconds. `spend` is what the turn's model steps
 * used (absent when nothing was reported); a turn stopped by a spend budget ends `TimedOut` with
 * `budget` saying which one — like the time budget, it ran out of what it was allowed.
 */
export type TurnOutcome = (
  | { status: 'Completed'; finalMessage: string; toolCallsMade: number; durationMs: number }
  | {
      status: 'Escalated';
      reason: string;
      pendingTool: string;
      pendingInput?: unknown;
      toolCallsMade: number;
      /** Set by the worker when only the owners may decide (the call follows untrusted content): the request went to them, not here. */
      ownersOnly?: true;
    }
  | { status: 'TimedOut'; toolCallsMade: number; elapsedMs: number; budget?: BudgetBreach }
  | { status: 'Cancelled'; toolCallsMade: number }
  | { status: 'Failed'; error: AivyxErrorData; toolCallsMade: number }
) & {
  spend?: Spend;
  /** A specialist's turn that read untrusted content: what it read (its lead labels the answer untrusted). */
  readUntrusted?: string[];
  /** The deferred tools the turn had loaded (core/tool-offer.ts): its session passes them to its next turn. */
  loadedTools?: string[];
};

/** Short audit-friendly summary of a tool outcome (no output bodies). */
export function summarizeToolOutcome(o: ToolOutcome): string {
  switch (o.status) {
    case 'Completed':
      return `Completed(${o.verified})`;
    case 'Denied':
      return `Denied(${o.scope})`;
    case 'RequiresEscalation':
      return `RequiresEscalation`;
    case 'Failed':
      return `Failed(${o.error.kind})`;
  }
}

/** Short summary of a turn outcome for `TurnEnded` and status lines. */
export function summarizeTurnOutcome(o: TurnOutcome): string {
  switch (o.status) {
    case 'Failed':
      return `Failed(${o.error.kind})`;
    case 'Escalated':
      return `Escalated(${o.pendingTool})`;
    case 'TimedOut':
      return o.budget ? `TimedOut(budget:${o.budget.limit})` : 'TimedOut';
    default:
      return o.status;
  }
}
