/**
 * config.read / config.write over a small ConfigStore port. Secret keys are never readable (nor
 * writable through config.write): a key is secret when the secrets store holds a secret of that
 * name, or when its name matches {@link SECRET_KEY_PATTERN}. Refusals are CapabilityDenied.
 */
import { AivyxError } from '../../core/errors.js';
import { configReadTool, configWriteTool } from '../../core/tools/config-tools.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Key names that are treated as secrets whatever the secrets store says. */
export const SECRET_KEY_PATTERN = /secret|token|password|key$/i;

/** The configuration the tools read and write (the worker supplies one; tests use the in-memory one). */
export interface ConfigStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  /** Names held by the secrets store (infra/secrets.ts `listSecretNames`). */
  secretNames(): Promise<readonly string[]>;
}

/** An in-memory ConfigStore. */
export function createMemoryConfigStore(initial: Record<string, string> = {}, secrets: readonly string[] = []): ConfigStore {
  const values = new Map(Object.entries(initial));
  return {
    get: async (key) => values.get(key),
    set: async (key, value) => void values.set(key, value),
    secretNames: async () => secrets,
  };
}

/** True when `key` names a secret (pattern, or a name in the secrets store, case-insensitively). */
export async function isSecretKey(store: ConfigStore, key: string): Promise<boolean> {
  if (SECRET_KEY_PATTERN.test(key)) return true;
  const lower = key.toLowerCase();
  return (await store.secretNames()).some((n) => n.toLowerCase() === lower);
}

function secretDenied(tool: string, key: string, scope: string): AivyxError {
  return new AivyxError('CapabilityDenied', `${tool}: "${key}" is a secret; secrets are never readable or writable through config tools`, {
    hint: 'secrets are managed by the operator with `aivyx secret`, never by the agent',
    detail: { tool, scope, secret: true },
  });
}

/** Creates config.read and config.write over `store`. */
export function createConfigTools(deps: { store: ConfigStore }): ToolImplementation[] {
  const { store } = deps;
  const read = implementTool(configReadTool, {
    async run({ key }) {
      if (await isSecretKey(store, key)) throw secretDenied('config.read', key, `config.read:${key}`);
      const value = await store.get(key);
      return { kind: 'completed', output: { key, value: value ?? null }, verified: 'NotApplicable' };
    },
  });
  const write = implementTool(configWriteTool, {
    async run({ key, value }) {
      if (await isSecretKey(store, key)) throw secretDenied('config.write', key, `config.write:${key}`);
      const previous = (await store.get(key)) ?? null;
      await store.set(key, value);
      const back = await store.get(key);
      return { kind: 'completed', output: { key, previous }, verified: back === value ? 'Verified' : 'Unverified' };
    },
  });
  return [read, write];
}
