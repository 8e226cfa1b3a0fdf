/**
 * The worker's own spend accounting around each call of a model in a turn (docs/BUDGETS.md): before
 * it, the turn's and the session's day's budgets against what this worker recorded (what the workflow
 * was told can be forged at the frontend, the ledger cannot); after it, the call's usage, priced, as a
 * ledger row of its own. `llmStep` counts the turn's steps here, `runTool` a tool's own model calls
 * (value.read's quarantined reader).
 */
import { Context } from '@temporalio/activity';
import { AivyxError } from '../../core/errors.js';
import { tighterBudget } from '../../core/specialists.js';
import {
  budgetUsedUp,
  priceOf,
  spendDay,
  spentAnything,
  stepSpend,
  type Spend,
  type SpendBudget,
  type TokenUsage,
} from '../../core/spend.js';
import { currentExecution } from '../execution.js';
import { addUsage } from '../llm/step-prompt.js';
import type { SpendKind, SpendMeter } from '../ports.js';
import type { TurnActivityDeps } from './types.js';

/** Where a call of a model is counted: its turn and session, and its step (a tool's call: the step that proposed it, and which call). */
export interface SpendAt {
  turnId: string;
  sessionKey: string;
  step: number;
  callId?: string;
}

/** What one call of a model used, and which model (its price-table key). */
interface Charge {
  kind: SpendKind;
  model: string;
  usage: TokenUsage;
}

/** A tool call's meter, and how `runTool` settles it once the tool has run. */
export interface ToolSpendMeter extends SpendMeter {
  /** Records what this attempt's model calls used; returns what the ledger holds for the call over all its attempts (undefined: nothing). */
  settle(): Promise<Spend | undefined>;
}

/** The spend checks and records of a worker's turn activities. */
export function modelSpend(deps: Pick<TurnActivityDeps, 'agent' | 'spend'>) {
  const budgets = deps.agent.spendBudgets ?? {};

  /**
   * Refuses (`CapabilityDenied`, "the model is not called: …") when the turn's calls before step
   * `beforeStep` or the session's day have used a budget up; a specialist's turn holds the tighter of
   * the worker's turn budget and its `slice`.
   */
  async function refuseOverBudget(at: SpendAt, beforeStep: number, slice?: SpendBudget): Promise<void> {
    const turnBudget = tighterBudget(budgets.turn, slice);
    if (!deps.spend || (!turnBudget && !budgets.sessionDay)) return;
    const [turn, day] = await Promise.all([
      turnBudget ? deps.spend.turnTotal(at.turnId, beforeStep) : undefined,
      budgets.sessionDay ? deps.spend.dayTotal(at.sessionKey, spendDay(Date.now())) : undefined,
    ]);
    const turnOver = turn && budgetUsedUp(turn, turnBudget);
    const over = turnOver ?? (day && budgetUsedUp(day, budgets.sessionDay));
    if (over)
      throw new AivyxError('CapabilityDenied', `the model is not called: this ${turnOver ? 'turn' : "session's day"} has used ${over}`, {
        hint: 'raise the budget (docs/BUDGETS.md) or wait for the next day (UTC)',
        detail: { budget: true },
      });
  }

  /** Prices one call and records it under this activity's run and attempt; returns its cost when the model has a price. */
  async function record(at: SpendAt, { kind, model, usage }: Charge): Promise<number | undefined> {
    const costUsd = priceOf(usage, deps.agent.prices?.[model]);
    await deps.spend?.record({
      turnId: at.turnId,
      runId: currentExecution().runId,
      attempt: Context.current().info.attempt,
      step: at.step,
      ...(at.callId !== undefined ? { callId: at.callId, kind } : {}),
      sessionKey: at.sessionKey,
      day: spendDay(Date.now()),
      model,
      usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
    });
    return costUsd;
  }

  /** What the ledger holds for tool call `at.callId` of this run, over all its attempts; undefined when nothing. */
  async function callSpend(at: Required<SpendAt>): Promise<Spend | undefined> {
    if (!deps.spend) return undefined;
    const spent = await deps.spend.callTotal({ turnId: at.turnId, runId: currentExecution().runId, step: at.step, callId: at.callId });
    return spentAnything(spent) || spent.unpricedSteps ? spent : undefined;
  }

  /**
   * The meter of tool call `at.callId`: before each of its model calls, the budgets against the turn so
   * far (its step `at.step` included); after, what the call used. A tool asks one model: this attempt's
   * calls are one row.
   */
  function meter(at: Required<SpendAt>, slice?: SpendBudget): ToolSpendMeter {
    const charges: Charge[] = [];
    return {
      allow: () => refuseOverBudget(at, at.step + 1, slice),
      charge: (kind, model, usage) => void charges.push({ kind, model, usage }),
      async settle() {
        const [first, ...more] = charges;
        if (!first) return undefined;
        const usage = more.reduce((sum, c) => addUsage(sum, c.usage), first.usage);
        const costUsd = await record(at, { ...first, usage });
        // Without a ledger, the workflow still counts what this attempt spent.
        return deps.spend ? callSpend(at) : stepSpend({ usage, ...(costUsd !== undefined ? { costUsd } : {}) });
      },
    };
  }

  return { refuseOverBudget, record, callSpend, meter };
}
