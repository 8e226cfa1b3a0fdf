/**
 * Named secrets (API tokens, passwords from the configuration) sealed in the `secrets` storage
 * domain. Values never leave this module except to the caller that asked for one by name.
 */
import { AivyxError } from '../core/errors.js';
import type { SealedStorage } from './storage/sealed-storage.js';

/** What a secret name may look like: a letter, then up to 63 of letters, digits, `_ . -`. */
export const SECRET_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** Throws Config unless `name` matches SECRET_NAME_PATTERN. */
export function assertSecretName(name: string): void {
  if (typeof name !== 'string' || !SECRET_NAME_PATTERN.test(name)) {
    throw new AivyxError('Config', `invalid secret name ${JSON.stringify(name)}`, {
      hint: 'a secret name starts with a letter and has at most 64 characters from A–Z a–z 0–9 _ . -',
    });
  }
}

/** Seals `value` as secret `name` (replacing any previous value). */
export async function setSecret(storage: SealedStorage, name: string, value: string): Promise<void> {
  assertSecretName(name);
  if (typeof value !== 'string' || value.length === 0) throw new AivyxError('Config', `secret ${name} must not be empty`);
  await storage.domain('secrets').put(name, new TextEncoder().encode(value));
}

/** The value of secret `name`, or undefined when it was never set. */
export async function getSecret(storage: SealedStorage, name: string): Promise<string | undefined> {
  assertSecretName(name);
  const bytes = await storage.domain('secrets').get(name);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}

/** Removes secret `name`; true when it existed. */
export async function deleteSecret(storage: SealedStorage, name: string): Promise<boolean> {
  assertSecretName(name);
  return storage.domain('secrets').delete(name);
}

/** Every secret name, sorted; values are opened (and so authenticated) but not returned. */
export async function listSecretNames(storage: SealedStorage): Promise<string[]> {
  const names: string[] = [];
  for await (const { key, value } of storage.domain('secrets').scan('')) {
    value.fill(0);
    names.push(key);
  }
  return names;
}
