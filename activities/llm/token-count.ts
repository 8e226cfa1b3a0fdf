/**
 * Token counts for budgets and the token bench, when the provider has not reported them (yet).
 * OpenAI models: `o200k_base` from gpt-tokenizer (pure JS, the encoding of the GPT-4o and later
 * families). Anthropic publishes no tokenizer for Claude 3 and later (its `count_tokens` endpoint
 * is online only, and @anthropic-ai/tokenizer is the Claude 2 one, documented as no longer
 * accurate), so Claude counts are `o200k_base` plus a fixed margin (docs/LLM-PROVIDERS.md).
 */
import { AivyxError } from '../../core/errors.js';

/** Which counting rule applies: the provider's family (`openai` also for Ollama and other compatible servers). */
export type TokenFamily = 'openai' | 'anthropic';

/**
 * Claude's tokenizers cut English prose and JSON into about 1.1–1.25× as many tokens as o200k_base;
 * the high end errs toward "over budget" (a history compacts a little early, never late).
 */
export const ANTHROPIC_TOKEN_FACTOR = 1.25;

// The encoding's tables take about a second to load: loaded on a worker's first step, not when a CLI starts.
let o200kTokens: ((text: string) => number) | undefined;

/** Loads the tokenizer (once); `countTokens` needs it. */
export async function loadTokenizer(): Promise<void> {
  o200kTokens ??= (await import('gpt-tokenizer/encoding/o200k_base')).countTokens;
}

/** Tokens of `text` as `family`'s models count them (an estimate for Anthropic); after `loadTokenizer`. */
export function countTokens(text: string, family: TokenFamily): number {
  if (!o200kTokens) throw new AivyxError('Internal', 'countTokens before loadTokenizer', { hint: 'await loadTokenizer() first' });
  const n = o200kTokens(text);
  return family === 'anthropic' ? Math.ceil(n * ANTHROPIC_TOKEN_FACTOR) : n;
}

/** The family of a provider by its name (`anthropic`, else OpenAI-compatible). */
export function tokenFamilyOf(providerName: string): TokenFamily {
  return providerName === 'anthropic' ? 'anthropic' : 'openai';
}
