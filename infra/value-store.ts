/**
 * Held values (core/values.ts) in sealed storage: their content is encrypted at rest like the session
 * history. A value past its expiry is refused by the worker, and `sweep` deletes it.
 */
import type { HeldValue, ValueStorePort } from '../activities/ports.js';
import type { DomainHandle } from './storage/index.js';

const PREFIX = 'turn-value/';
const key = (id: string): string => `${PREFIX}${id}`;
const parsed = (bytes: Uint8Array): HeldValue => JSON.parse(new TextDecoder().decode(bytes)) as HeldValue;

/** A value store over a sealed storage domain, with the sweep of expired values. */
export function createValueStore(domain: DomainHandle, now: () => number = Date.now): ValueStorePort & { sweep(): Promise<number> } {
  return {
    async put(v) {
      if ((await domain.get(key(v.id))) !== undefined) return;
      await domain.put(key(v.id), new TextEncoder().encode(JSON.stringify(v)));
    },
    async get(id) {
      const bytes = await domain.get(key(id));
      return bytes === undefined ? undefined : parsed(bytes);
    },
    async sweep() {
      const expired: string[] = [];
      for await (const { key: k, value } of domain.scan(PREFIX)) if (parsed(value).expiresAt <= now()) expired.push(k);
      for (const k of expired) await domain.delete(k);
      return expired.length;
    },
  };
}
