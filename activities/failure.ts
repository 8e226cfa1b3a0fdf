/** Turning errors into Temporal failures that carry the seed's error kind as `type`. */
import { ApplicationFailure } from '@temporalio/common';
import { NON_RETRYABLE_KINDS } from '../core/activity-policies.js';
import { AivyxError, type AivyxErrorData, type AivyxErrorKind } from '../core/errors.js';

// Kinds where trying again cannot help (the one list, beside the retry table).
const NON_RETRYABLE: ReadonlySet<AivyxErrorKind> = new Set(NON_RETRYABLE_KINDS);

/** Plain error data for anything thrown (an `AivyxError` keeps its kind; anything else is `Internal`). */
export function errorData(err: unknown, fallback: AivyxErrorKind = 'Internal'): AivyxErrorData {
  if (err instanceof AivyxError) return err.toData();
  return { kind: fallback, message: err instanceof Error ? err.message : String(err) };
}

/** An `ApplicationFailure` whose `type` is the error kind and whose first detail is the error data. */
export function toApplicationFailure(err: unknown): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  const data = errorData(err);
  // An error may say for itself that retrying cannot help, or when to retry (a provider's retry-after).
  const nonRetryable = NON_RETRYABLE.has(data.kind) || data.detail?.retryable === false;
  const retryAfterMs = data.detail?.retryAfterMs;
  const nextRetryDelay =
    !nonRetryable && typeof retryAfterMs === 'number' && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined;
  return ApplicationFailure.create({
    type: data.kind,
    message: data.message,
    nonRetryable,
    details: [data],
    cause: err instanceof Error ? err : undefined,
    ...(nextRetryDelay === undefined ? {} : { nextRetryDelay }),
  });
}
