/** The LLM provider port: one model step per activity call, streaming text best-effort. */
import type { LlmStepRequest, LlmStepResult } from '../../core/llm.js';

/** Where a provider streams to while a step runs. */
export interface LlmStepSink {
  /** A piece of assistant text, as it arrives (best-effort; the result carries the full text). */
  text(chunk: string): void;
  /** Activity heartbeat: call at least every few seconds while waiting on the model. */
  heartbeat(): void;
  /** Aborted when the step is cancelled; providers stop promptly and throw `signal.reason`. */
  signal: AbortSignal;
}

/** A model behind the seed's `LlmProvider`: deterministic ids in, one step result out. */
export interface LlmProvider {
  /** Short name for logs and audit, e.g. `scripted`. */
  readonly name: string;
  /** The model it asks (its price-table key is `<name>:<model>`); absent for the scripted model (key `scripted`). */
  readonly model?: string;
  /** Runs one step (with the tokens it used, when the provider says); throws AivyxError('Llm') for provider failures. */
  step(req: LlmStepRequest, sink: LlmStepSink): Promise<LlmStepResult>;
}

/** The key the price table (AIVYX_PRICES) knows a provider's model by: `openai:gpt-4o`; the scripted model is `scripted`. */
export function priceKey(llm: Pick<LlmProvider, 'name' | 'model'>): string {
  return llm.model ? `${llm.name}:${llm.model}` : llm.name;
}
