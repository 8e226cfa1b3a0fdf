/**
 * Token counts for budgets and the token bench, when the provider has not reported them (yet).
 * OpenAI models: `o200k_base` from gpt-tokenizer (pure JS, the encoding of the GPT-4o and later
 * families). Anthropic publishes no tokenizer for Claude 3 and later (its `count_tokens` endpoint
 * is online only, and @anthropic-ai/tokenizer is the Claude 2 one, documented as no longer
 * accurate), so Claude counts are `o200k_base` plus a fixed margin (docs/LLM-PROVIDERS.md).
 */
import { countTokens as o200kTokens } from 'gpt-tokenizer/encoding/o200k_base';

/** Which counting rule applies: the provider's family (`openai` also for Ollama and other compatible servers). */
export type TokenFamily = 'openai' | 'anthropic';

/**
 * Claude's tokenizers cut English prose and JSON into about 1.1–1.25× as many tokens as o200k_base;
 * the high end errs toward "over budget" (a history compacts a little early, never late).
 */
export const ANTHROPIC_TOKEN_FACTOR = 1.25;

/** Tokens of `text` as `family`'s models count them (an estimate for Anthropic). */
export function countTokens(text: string, family: TokenFamily): number {
  const n = o200kTokens(text);
  return family === 'anthropic' ? Math.ceil(n * ANTHROPIC_TOKEN_FACTOR) : n;
}

/** The family of a provider by its name (`anthropic`, else OpenAI-compatible). */
export function tokenFamilyOf(providerName: string): TokenFamily {
  return providerName === 'anthropic' ? 'anthropic' : 'openai';
}
