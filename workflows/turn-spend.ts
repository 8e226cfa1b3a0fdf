/** A turn's spend checks (docs/BUDGETS.md): pure, on totals summed from `llmStep` and `runTool` results. */
import type { OpenedSpend } from '../activities/turn-activities.js';
import { addSpend, budgetUsedUp, describeSpend, spentAnything, type BudgetBreach, type BudgetLimit, type Spend } from '../core/spend.js';

/**
 * Why the turn must stop at `limit`, or undefined: the turn's own budget against what it spent; the
 * session's day against what its earlier turns spent today plus this one.
 */
export function spendStop(opened: OpenedSpend | undefined, spent: Spend, limit: BudgetLimit): BudgetBreach | undefined {
  if (limit === 'turn') {
    const why = budgetUsedUp(spent, opened?.turn);
    return why ? { limit, reason: `this request used ${why} and was stopped` } : undefined;
  }
  const day = opened?.day;
  const why = day ? budgetUsedUp(addSpend(day.used, spent), day.budget) : undefined;
  return why ? { limit, reason: `this conversation has used ${why} today (UTC)` } : undefined;
}

/** ` · 1234 tokens (…)` for the UI's current details; empty before anything was spent. */
export function spendSummary(spent: Spend): string {
  return spentAnything(spent) ? ` · ${describeSpend(spent)}` : '';
}
