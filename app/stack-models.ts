/** The stack's models, settled before Temporal starts: a bad script or a missing key is reported at once. */
import { detectOllama, providerFromSpec } from '../activities/llm/provider-from-config.js';
import type { LlmProvider } from '../activities/llm/llm-provider.js';
import type { Specialist } from '../core/specialists.js';
import type { AivyxConfig } from '../infra/config.js';
import { getSecret } from '../infra/secrets.js';
import { runsWorker, type StackStart } from './stack-types.js';

/** The models a worker runs turns with (none in the `gateway` role). */
export interface StackModels {
  llm: LlmProvider | undefined;
  specialistLlms: Map<string, LlmProvider> | undefined;
}

/** Settles the assistant's model and the specialists' own models, reading their keys from the sealed storage. */
export async function settleModels(
  { config, opts, role, log }: StackStart,
  storage: Parameters<typeof getSecret>[0],
): Promise<StackModels> {
  // The model is settled before Temporal starts: a bad script or a missing key is reported at once.
  const llm = runsWorker(role)
    ? (opts.llm ?? (await providerFromSpec(await chooseLlm(config, log), opts.env, (name) => getSecret(storage, name))))
    : undefined;
  // A specialist that names its own model gets that provider, settled here too (a missing key stops the start).
  const specialistLlms = runsWorker(role) && !opts.llm ? await specialistProviders(config.specialists, opts.env, storage) : undefined;
  return { llm, specialistLlms };
}

/** The providers of the specialists that name a model of their own, by name; undefined when none does. */
async function specialistProviders(
  specialists: readonly Specialist[],
  env: NodeJS.ProcessEnv,
  storage: Parameters<typeof getSecret>[0],
): Promise<Map<string, LlmProvider> | undefined> {
  const named = specialists.filter((s) => s.model !== undefined);
  if (named.length === 0) return undefined;
  const providers = await Promise.all(named.map((s) => providerFromSpec(s.model!, env, (name) => getSecret(storage, name))));
  return new Map(named.map((s, i) => [s.name, providers[i]!]));
}

/** The configured model; unset → Ollama when it answers on localhost, else the offline demo script. */
async function chooseLlm(config: AivyxConfig, log: (line: string) => void): Promise<string> {
  if (config.llm) return config.llm;
  if (await detectOllama()) {
    log(`model: Ollama on localhost (${config.ollamaModel}; set AIVYX_OLLAMA_MODEL or AIVYX_LLM to change)`);
    return `ollama:${config.ollamaModel}`;
  }
  log(
    'model: none configured — using the offline demo script. Set AIVYX_LLM=openai:<model>, anthropic:<model> or ollama:<model> (docs/LLM-PROVIDERS.md)',
  );
  return `scripted:${config.demoScript}`;
}
