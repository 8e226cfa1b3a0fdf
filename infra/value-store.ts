/** Held values (core/values.ts) in sealed storage: their content is encrypted at rest like the session history. */
import type { HeldValue, ValueStorePort } from '../activities/ports.js';
import type { DomainHandle } from './storage/index.js';

const key = (id: string): string => `turn-value/${id}`;

/** A value store over a sealed storage domain. */
export function createValueStore(domain: DomainHandle): ValueStorePort {
  return {
    async put(v) {
      if ((await domain.get(key(v.id))) !== undefined) return;
      await domain.put(key(v.id), new TextEncoder().encode(JSON.stringify(v)));
    },
    async get(id) {
      const bytes = await domain.get(key(id));
      return bytes === undefined ? undefined : (JSON.parse(new TextDecoder().decode(bytes)) as HeldValue);
    },
  };
}
