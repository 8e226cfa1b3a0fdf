/** Reading activity failures inside the sandbox: branch on `failure.type`, never on `instanceof` across it. */
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { isAivyxErrorKind, type AivyxErrorData } from '../core/errors.js';

/** Converts whatever an awaited activity threw into the seed's error data. */
export function failureToErrorData(err: unknown): AivyxErrorData {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure) {
    const detail = cause.details?.[0] as Partial<AivyxErrorData> | undefined;
    const kind = isAivyxErrorKind(cause.type) ? cause.type : 'Internal';
    const data: AivyxErrorData = { kind, message: cause.message };
    if (detail && typeof detail.hint === 'string') data.hint = detail.hint;
    if (detail && detail.detail && typeof detail.detail === 'object') data.detail = detail.detail;
    return data;
  }
  if (cause instanceof TimeoutFailure) {
    return { kind: 'Timeout', message: `activity timed out (${cause.timeoutType})` };
  }
  return { kind: 'Internal', message: cause instanceof Error ? cause.message : String(cause) };
}

/** The failure a turn workflow ends with when its outcome is `Failed`: type = the AivyxError kind. */
export function turnFailure(error: AivyxErrorData, outcome: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type: error.kind, message: error.message, nonRetryable: true, details: [outcome] });
}
