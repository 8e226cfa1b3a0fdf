/** `AIVYX_LLM` → an LlmProvider: `scripted:<file>`, `openai:<model>`, `ollama:<model>`, `anthropic:<model>`. */
import { AivyxError } from '../../core/errors.js';
import { createAnthropicProvider } from './anthropic.js';
import type { LlmProvider } from './llm-provider.js';
import { API_KEY_SETTING } from './llm-errors.js';
import { createOpenAiCompatibleProvider } from './openai-compatible.js';
import { loadScriptedProvider } from './scripted-provider.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const OLLAMA_DEFAULT_BASE_URL = 'http://127.0.0.1:11434/v1';
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

const FORMS = 'scripted:<file>, openai:<model>, ollama:<model>, anthropic:<model>';

/** The API key: the named secret when AIVYX_LLM_API_KEY_SECRET is set, else AIVYX_LLM_API_KEY. */
async function apiKey(
  env: NodeJS.ProcessEnv,
  secrets: ((name: string) => Promise<string | undefined>) | undefined,
  provider: string,
): Promise<string | undefined> {
  const secretName = env.AIVYX_LLM_API_KEY_SECRET;
  if (secretName) {
    if (!secrets)
      throw new AivyxError('Config', `AIVYX_LLM_API_KEY_SECRET names the secret "${secretName}", but no secret store is available here`, {
        hint: 'set AIVYX_LLM_API_KEY instead, or run where the secret store is open',
      });
    const value = await secrets(secretName);
    if (!value)
      throw new AivyxError('Config', `the secret "${secretName}" (AIVYX_LLM_API_KEY_SECRET) is not set`, {
        hint: `store the ${provider} API key under that name`,
        detail: { secret: secretName },
      });
    return value;
  }
  return env.AIVYX_LLM_API_KEY || undefined;
}

function model(spec: string, prefix: string): string {
  const m = spec.slice(prefix.length).trim();
  if (m === '')
    throw new AivyxError('Config', `AIVYX_LLM=${prefix} needs a model name`, {
      hint: `e.g. ${prefix}${prefix === 'anthropic:' ? 'claude-sonnet-4-5' : prefix === 'ollama:' ? 'llama3.1' : 'gpt-4o-mini'}`,
    });
  return m;
}

function maxTokens(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.AIVYX_LLM_MAX_TOKENS;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new AivyxError('Config', `AIVYX_LLM_MAX_TOKENS must be a positive integer, got "${raw}"`);
  return n;
}

/**
 * Builds the provider a spec names. `secrets` resolves a secret by name (the encrypted secret
 * store); the key is read once, here, and never logged.
 */
export async function providerFromSpec(
  spec: string,
  env: NodeJS.ProcessEnv,
  secrets?: (name: string) => Promise<string | undefined>,
): Promise<LlmProvider> {
  const s = spec.trim();
  const baseOverride = env.AIVYX_LLM_BASE_URL || undefined;
  if (s.startsWith('scripted:')) return loadScriptedProvider(s);
  if (s.startsWith('openai:')) {
    const m = model(s, 'openai:');
    const baseUrl = baseOverride ?? OPENAI_DEFAULT_BASE_URL;
    const key = await apiKey(env, secrets, 'OpenAI');
    // A self-hosted OpenAI-compatible server (AIVYX_LLM_BASE_URL) may need no key; api.openai.com does.
    if (!key && baseUrl === OPENAI_DEFAULT_BASE_URL)
      throw new AivyxError('Config', `openai:${m} needs an API key`, { hint: `set ${API_KEY_SETTING}` });
    return createOpenAiCompatibleProvider({ baseUrl, model: m, ...(key ? { apiKey: key } : {}) });
  }
  if (s.startsWith('ollama:')) {
    const m = model(s, 'ollama:');
    return createOpenAiCompatibleProvider({ name: 'ollama', baseUrl: baseOverride ?? OLLAMA_DEFAULT_BASE_URL, model: m });
  }
  if (s.startsWith('anthropic:')) {
    const m = model(s, 'anthropic:');
    const key = await apiKey(env, secrets, 'Anthropic');
    if (!key) throw new AivyxError('Config', `anthropic:${m} needs an API key`, { hint: `set ${API_KEY_SETTING}` });
    const mt = maxTokens(env);
    return createAnthropicProvider({
      baseUrl: baseOverride ?? ANTHROPIC_DEFAULT_BASE_URL,
      model: m,
      apiKey: key,
      ...(mt === undefined ? {} : { maxTokens: mt }),
    });
  }
  throw new AivyxError('Config', `unknown LLM provider "${s}"`, {
    hint: `set AIVYX_LLM to one of: ${FORMS}`,
    detail: { forms: FORMS.split(', ') },
  });
}

/**
 * True when an Ollama server answers GET {base}/api/tags within 500 ms (for `aivyx up`'s default).
 * `baseUrl` may be the server root or its OpenAI-compatible `/v1` URL.
 */
export async function detectOllama(
  fetchImpl: typeof fetch = globalThis.fetch,
  baseUrl: string = OLLAMA_DEFAULT_BASE_URL,
): Promise<boolean> {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  try {
    const res = await fetchImpl(`${root}/api/tags`, { signal: AbortSignal.timeout(500) });
    await res.body?.cancel().catch(() => undefined);
    return res.ok;
  } catch {
    return false;
  }
}
