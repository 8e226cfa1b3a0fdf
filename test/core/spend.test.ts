/** Spend arithmetic and budgets (core/spend.ts), and their configuration (AIVYX_PRICES, AIVYX_*_BUDGET). */
import { describe, expect, it } from 'vitest';
import { addSpend, budgetUsedUp, describeSpend, NO_SPEND, priceOf, raisedBudget, stepSpend } from '../../core/spend.js';
import { loadConfig } from '../../infra/config.js';

describe('spend', () => {
  it('sums steps; an unpriced step counts its tokens and is named, a step without usage counts nothing', () => {
    const priced = stepSpend({ usage: { inputTokens: 1000, outputTokens: 200 }, costUsd: 0.01 });
    const unpriced = stepSpend({ usage: { inputTokens: 10, outputTokens: 5 } });
    const total = addSpend(addSpend(addSpend(NO_SPEND, priced), unpriced), stepSpend(undefined));
    expect(total).toEqual({ inputTokens: 1010, outputTokens: 205, costUsd: 0.01, unpricedSteps: 1 });
    expect(describeSpend(total)).toBe('1215 tokens (1010 in, 205 out), $0.0100 (1 step(s) of an unpriced model: tokens only)');
    expect(priceOf({ inputTokens: 1_000_000, outputTokens: 500_000 }, { inputPerMTok: 2.5, outputPerMTok: 10 })).toBe(7.5);
    expect(priceOf({ inputTokens: 1, outputTokens: 1 }, undefined)).toBeUndefined();
    // Cache reads and writes at their own prices when the table has them, else at the input price.
    const cachedUsage = { inputTokens: 1_000_000, outputTokens: 0, cachedInputTokens: 800_000, cacheWriteTokens: 100_000 };
    expect(priceOf(cachedUsage, { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3, cacheWritePerMTok: 3.75 })).toBeCloseTo(
      0.3 + 0.24 + 0.375,
    );
    expect(priceOf(cachedUsage, { inputPerMTok: 3, outputPerMTok: 15 })).toBe(3);
  });

  it('a budget is used up when tokens or cost reach it; the raise asked for is what was spent plus one more budget', () => {
    const spent = { inputTokens: 80, outputTokens: 20, costUsd: 0.3 };
    expect(budgetUsedUp(spent, undefined)).toBeUndefined();
    expect(budgetUsedUp(spent, { tokens: 101 })).toBeUndefined();
    expect(budgetUsedUp(spent, { tokens: 100 })).toBe('100 tokens of a 100-token budget');
    expect(budgetUsedUp(spent, { tokens: 1000, costUsd: 0.25 })).toBe('$0.3000 of a $0.2500 budget');
    expect(raisedBudget({ tokens: 60, costUsd: 0.25 }, spent)).toEqual({ tokens: 160, costUsd: 0.55 });
  });

  it('reads prices and budgets from the environment, refusing a malformed price table by name', () => {
    const config = loadConfig(
      {
        AIVYX_PRICES: '{"openai:gpt-4o": {"inputPerMTok": 2.5, "outputPerMTok": 10}}',
        AIVYX_TURN_TOKEN_BUDGET: '4000',
        AIVYX_SESSION_DAY_COST_BUDGET: '1.50',
        AIVYX_MISSION_TOKEN_BUDGET: '100000',
      },
      process.cwd(),
    );
    expect(config.prices).toEqual({ 'openai:gpt-4o': { inputPerMTok: 2.5, outputPerMTok: 10 } });
    expect(config.spendBudgets).toEqual({ turn: { tokens: 4000 }, sessionDay: { costUsd: 1.5 }, mission: { tokens: 100000 } });
    expect(loadConfig({}, process.cwd()).spendBudgets).toEqual({});
    expect(() => loadConfig({ AIVYX_PRICES: '{"openai:gpt-4o": {"inputPerMTok": -1}}' }, process.cwd())).toThrow(/AIVYX_PRICES/);
    expect(() => loadConfig({ AIVYX_TURN_COST_BUDGET: 'lots' }, process.cwd())).toThrow(/AIVYX_TURN_COST_BUDGET/);
  });
});
