/**
 * Workflow interceptors of every aivyx workflow: what the worker's payload codec refused (a payload
 * that was not encrypted, or was copied from another workflow) reaches workflow code as a refusal
 * marker; here it becomes a clean failure instead of data. An Update carrying one is rejected; a
 * Signal carrying one is dropped; an activity or child result replaced by one fails that activity or
 * child with `Crypto`. (A workflow's own input is checked by the workflow, which audits the refusal:
 * `workflows/inputs.ts`.)
 */
import { ApplicationFailure, log, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { refusedPayloadReason } from '../core/refused-payload.js';

/** The first refusal among `values`, if any. */
function firstRefusal(values: readonly unknown[]): string | undefined {
  for (const v of values) {
    const reason = refusedPayloadReason(v);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** The details a refused result's failure carries, so workflow code can tell it from other Crypto failures. */
const REFUSED_RESULT = 'refused-result';

function refusal(what: string, reason: string, details?: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'Crypto',
    nonRetryable: true,
    message: `${what} refused: ${reason}`,
    ...(details ? { details: [details] } : {}),
  });
}

/** True when `err` is an activity result the codec refused (its completion came from someone else). */
export function isRefusedResult(err: unknown): boolean {
  const e = err as { type?: unknown; details?: unknown };
  return e?.type === 'Crypto' && Array.isArray(e.details) && e.details[0] === REFUSED_RESULT;
}

/** Throws the Crypto failure of a refused result. */
function checkResult<T>(what: string, value: T): T {
  const reason = refusedPayloadReason(value);
  if (reason !== undefined) throw refusal(what, reason, REFUSED_RESULT);
  return value;
}

/** The interceptors the worker bundles (`workflowInterceptorModules`). */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async handleSignal(input, next) {
        const reason = firstRefusal(input.args);
        // A signal has no one to answer: it is dropped (logged without its content).
        if (reason !== undefined) return void log.warn(`signal ${input.signalName} dropped: ${reason}`);
        return next(input);
      },
      validateUpdate(input, next) {
        const reason = firstRefusal(input.args);
        if (reason !== undefined) throw refusal(`update ${input.name}`, reason);
        next(input);
      },
      async handleUpdate(input, next) {
        const reason = firstRefusal(input.args);
        if (reason !== undefined) throw refusal(`update ${input.name}`, reason);
        return next(input);
      },
    },
  ],
  outbound: [
    {
      async scheduleActivity(input, next) {
        return checkResult(`the result of activity ${input.activityType}`, await next(input));
      },
      async scheduleLocalActivity(input, next) {
        return checkResult(`the result of local activity ${input.activityType}`, await next(input));
      },
      async startChildWorkflowExecution(input, next) {
        const [started, completed] = await next(input);
        return [started, completed.then((r) => checkResult(`the result of child workflow ${input.workflowType}`, r))];
      },
    },
  ],
});
