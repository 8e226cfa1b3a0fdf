/**
 * Bundled only when tracing is on, before the Temporal OpenTelemetry workflow interceptors. A
 * session starts each turn from its own loop, whose trace context is the session's (opened by the
 * first message, ended a day later): left alone, every turn of a session would share one trace
 * that no one could see until the session closes. Here a turn's child workflow starts in the trace
 * of the `submitTurn` update that queued it, so each turn is one trace rooted at the channel's call
 * in the process that received the message. Only trace context moves; no command changes.
 */
import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import { defaultPayloadConverter, type Payload, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { submitTurnUpdate } from './messages.js';

/** The header the Temporal OpenTelemetry interceptors carry trace context in. */
const TRACE_HEADER = '_tracer-data';

/** The interceptors the worker bundles when tracing (`workflowInterceptorModules`). */
export const interceptors: WorkflowInterceptorsFactory = () => {
  // Turn id → the trace header of the update that queued it (this workflow run only).
  const submitted = new Map<string, Payload>();
  return {
    inbound: [
      {
        async handleUpdate(input, next) {
          const header = input.headers[TRACE_HEADER];
          const turnId: unknown =
            input.name === submitTurnUpdate.name ? (input.args[0] as { turnId?: unknown } | undefined)?.turnId : undefined;
          if (header && typeof turnId === 'string') submitted.set(turnId, header);
          return next(input);
        },
      },
    ],
    outbound: [
      {
        async startChildWorkflowExecution(input, next) {
          const header = submitted.get(input.options.workflowId);
          if (!header) return next(input);
          submitted.delete(input.options.workflowId);
          // Anyone at the frontend can set this header: one that does not parse only loses the trace link.
          let carrier: Record<string, string>;
          try {
            carrier = defaultPayloadConverter.fromPayload<Record<string, string>>(header);
          } catch {
            return next(input);
          }
          return context.with(propagation.extract(ROOT_CONTEXT, carrier), () => next(input));
        },
      },
    ],
  };
};
