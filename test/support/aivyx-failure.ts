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
