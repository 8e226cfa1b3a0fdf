/**
 * The refusal marker: what the worker's payload codec hands the workflow in place of a payload it
 * will not open (not encrypted, or bound to another workflow). The workflow interceptors
 * (`workflows/interceptors.ts`) turn it into a clean `Crypto` failure or a rejected Update.
 */

/** The one key of a refusal marker object. */
export const REFUSED_PAYLOAD_KEY = '__aivyxRefusedPayload';

/** Why a payload was refused, when `value` is a refusal marker. */
export function refusedPayloadReason(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const reason = (value as Record<string, unknown>)[REFUSED_PAYLOAD_KEY];
  return typeof reason === 'string' ? reason : undefined;
}
