/** The assistant's own configuration values (config.read/config.write), sealed in the `config` domain. */
import type { ConfigStore } from '../activities/tools/config-tools.js';
import { listSecretNames } from './secrets.js';
import type { SealedStorage } from './storage/index.js';

/** A `ConfigStore` over sealed storage; secret names come from the `secrets` domain so they are never readable as config. */
export function createConfigStore(storage: SealedStorage): ConfigStore {
  const config = storage.domain('config');
  return {
    get: (key) => config.getJson<string>(key),
    set: (key, value) => config.putJson(key, value),
    secretNames: () => listSecretNames(storage),
  };
}
