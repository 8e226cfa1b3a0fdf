/** Awaiting a promise that must reject with an `AivyxError`; returns it for assertions on kind and text. */
import { AivyxError } from '../../core/errors.js';

/** The `AivyxError` that `p` rejects with; anything else (or success) fails the test. */
export async function aivyxFailure(p: Promise<unknown>): Promise<AivyxError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof AivyxError) return e;
    throw e;
  }
  throw new Error('expected an AivyxError, but the promise resolved');
}

/** The `AivyxError` kind a synchronous call throws, or undefined when it does not throw. */
export function errorKindOf(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as AivyxError).kind;
  }
}
