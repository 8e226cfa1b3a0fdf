/**
 * Spend: what model steps cost in tokens and money, and the budgets a turn, a session's day and a
 * mission hold them to (docs/BUDGETS.md). Pure and workflow-safe: workflows sum what `llmStep` and
 * `runTool` (a quarantined read's model call) results report, so every check replays the same.
 */
import { z } from 'zod';

/** Tokens one model step used, as its provider reported (or, for the scripted model, estimated) them. */
export interface TokenUsage {
  /** Every input token, cached or not. */
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those served from the provider's prompt cache (billed at a fraction), when it says. */
  cachedInputTokens?: number;
  /** Of `inputTokens`, those written to the prompt cache this step (Anthropic bills them at a premium). */
  cacheWriteTokens?: number;
}

/** Running totals: tokens, and the cost of the steps whose model has a price. */
export interface Spend extends TokenUsage {
  /** US dollars of the priced steps; absent while no step had a price. */
  costUsd?: number;
  /** Steps whose model is not in the price table (their tokens count, their cost is unknown). */
  unpricedSteps?: number;
}

/** A limit on tokens (input + output), on cost, or both; reaching either one uses the budget up. */
export interface SpendBudget {
  tokens?: number;
  costUsd?: number;
}

/** Which budget a stopped turn ran into. */
export type BudgetLimit = 'turn' | 'session-day';

/** Why a turn stopped at a budget: which one, and a sentence for the person who asked. */
export interface BudgetBreach {
  limit: BudgetLimit;
  reason: string;
}

/** A budget as configuration and mission definitions write it. */
export const spendBudgetSchema = z.lazy(() =>
  z
    .strictObject({
      tokens: z.number().int().positive().optional(),
      costUsd: z.number().positive().finite().optional(),
    })
    .refine((b) => b.tokens !== undefined || b.costUsd !== undefined, 'needs "tokens", "costUsd" or both'),
);

/** Running totals as a mission carries them through continue-as-new. */
export const spendSchema = z.lazy(() =>
  z.strictObject({
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    costUsd: z.number().nonnegative().finite().optional(),
    unpricedSteps: z.number().int().nonnegative().optional(),
  }),
);

/** US dollars per million tokens of one model. */
export const modelPriceSchema = z.lazy(() =>
  z.strictObject({
    inputPerMTok: z.number().nonnegative().finite(),
    outputPerMTok: z.number().nonnegative().finite(),
    /** Input tokens read from the prompt cache (Anthropic: 0.1× input; OpenAI: 0.5× or less); default the input price. */
    cachedInputPerMTok: z.number().nonnegative().finite().optional(),
    /** Input tokens written to the prompt cache (Anthropic: 1.25× input); default the input price. */
    cacheWritePerMTok: z.number().nonnegative().finite().optional(),
  }),
);

/** Prices by model key, the `AIVYX_LLM` spelling: `openai:gpt-4o`, `anthropic:claude-sonnet-4-5`, `scripted`. */
export const priceTableSchema = z.lazy(() => z.record(z.string().min(1), modelPriceSchema));

/** Prices by model key. */
export type PriceTable = z.infer<typeof priceTableSchema>;

/** Nothing spent yet. */
export const NO_SPEND: Spend = { inputTokens: 0, outputTokens: 0 };

/** Input plus output tokens. */
export function spendTokens(s: TokenUsage): number {
  return s.inputTokens + s.outputTokens;
}

/** The cost of `usage` at `price`, or undefined when the model has no price. */
export function priceOf(usage: TokenUsage, price: z.infer<typeof modelPriceSchema> | undefined): number | undefined {
  if (!price) return undefined;
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const input =
    (usage.inputTokens - cached - written) * price.inputPerMTok +
    cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
    written * (price.cacheWritePerMTok ?? price.inputPerMTok);
  return (input + usage.outputTokens * price.outputPerMTok) / 1_000_000;
}

/** The spend of one step: its usage and cost; missing usage (histories older than budgets) counts as nothing. */
export function stepSpend(step: { usage?: TokenUsage; costUsd?: number } | undefined): Spend {
  const usage = step?.usage;
  if (!usage) return NO_SPEND;
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(step.costUsd !== undefined ? { costUsd: step.costUsd } : { unpricedSteps: 1 }),
  };
}

/** `a + b`. */
export function addSpend(a: Spend, b: Spend | undefined): Spend {
  if (!b) return a;
  const cost = a.costUsd === undefined && b.costUsd === undefined ? undefined : (a.costUsd ?? 0) + (b.costUsd ?? 0);
  const unpriced = (a.unpricedSteps ?? 0) + (b.unpricedSteps ?? 0);
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...(cost !== undefined ? { costUsd: cost } : {}),
    ...(unpriced > 0 ? { unpricedSteps: unpriced } : {}),
  };
}

/** True when anything was spent. */
export function spentAnything(s: Spend): boolean {
  return spendTokens(s) > 0 || (s.costUsd ?? 0) > 0;
}

const usd = (n: number): string => `$${n.toFixed(n < 1 ? 4 : 2)}`;

/** e.g. `1234 tokens (1000 in, 234 out), $0.0123` — cost only when known, and a note when some steps had no price. */
export function describeSpend(s: Spend): string {
  const cost = s.costUsd !== undefined ? `, ${usd(s.costUsd)}` : '';
  const unpriced = s.unpricedSteps ? ` (${s.unpricedSteps} step(s) of an unpriced model: tokens only)` : '';
  return `${spendTokens(s)} tokens (${s.inputTokens} in, ${s.outputTokens} out)${cost}${unpriced}`;
}

/** e.g. `4000 tokens` or `4000 tokens / $0.50`. */
export function describeBudget(b: SpendBudget): string {
  return [b.tokens !== undefined ? `${b.tokens} tokens` : undefined, b.costUsd !== undefined ? usd(b.costUsd) : undefined]
    .filter((x) => x !== undefined)
    .join(' / ');
}

/** e.g. `100 tokens (80 in, 20 out) of a budget of 60 tokens`: a mission's line in the UI and `mission show`. */
export function describeSpendAgainst(s: Spend | undefined, b: SpendBudget | undefined): string {
  return `${describeSpend(s ?? NO_SPEND)}${b ? ` of a budget of ${describeBudget(b)}` : ''}`;
}

/** Why `s` has used `b` up (tokens or cost reached), or undefined while some of it is left. */
export function budgetUsedUp(s: Spend, b: SpendBudget | undefined): string | undefined {
  if (!b) return undefined;
  if (b.tokens !== undefined && spendTokens(s) >= b.tokens) return `${spendTokens(s)} tokens of a ${b.tokens}-token budget`;
  if (b.costUsd !== undefined && (s.costUsd ?? 0) >= b.costUsd) return `${usd(s.costUsd ?? 0)} of a ${usd(b.costUsd)} budget`;
  return undefined;
}

/** The budget an approver is asked to raise a used-up one to: what was spent plus one more budget's worth. */
export function raisedBudget(b: SpendBudget, s: Spend): SpendBudget {
  return {
    ...(b.tokens !== undefined ? { tokens: Math.max(b.tokens, spendTokens(s)) + b.tokens } : {}),
    ...(b.costUsd !== undefined ? { costUsd: Math.max(b.costUsd, s.costUsd ?? 0) + b.costUsd } : {}),
  };
}

/** Totals as `TurnEnded` and `MissionEnded` record them (counts and a cost, never text). */
export function spendFields(s: Spend): { inputTokens: number; outputTokens: number; totalTokens: number; costUsd?: number } {
  return {
    inputTokens: s.inputTokens,
    outputTokens: s.outputTokens,
    totalTokens: spendTokens(s),
    ...(s.costUsd !== undefined ? { costUsd: s.costUsd } : {}),
  };
}

/** The UTC calendar day of an instant, `YYYY-MM-DD`: the day a session's spend is counted on. */
export function spendDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}
