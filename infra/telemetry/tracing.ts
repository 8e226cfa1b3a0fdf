/**
 * Tracing for one process: an OTLP/HTTP exporter behind the redacting processor, registered as the
 * global tracer provider (so the Temporal interceptors and our own spans use it), and what the
 * Temporal client and worker need to join in: client interceptors (the span of starting a workflow
 * is its parent, across processes, through headers), activity interceptors, the workflow
 * interceptor modules for the bundle, and the sink workflow spans leave the sandbox through.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import { sibling } from '../module-path.js';
import { aivyxActivitySpans } from './activity-spans.js';
import type { TracingSettings } from './settings.js';
import { RedactingSpanProcessor } from './span-redaction.js';

// Incubating semantic-convention names, copied rather than imported as the conventions advise.
const ATTR_SERVICE_INSTANCE_ID = 'service.instance.id';
const ATTR_PROCESS_PID = 'process.pid';

/** The Temporal SDK's workflow interceptors for tracing, and ours that roots each turn in its submitter's trace. */
const WORKFLOW_TRACING_MODULES = [
  sibling(import.meta.url, '../../workflows/tracing-interceptors'),
  createRequire(import.meta.url).resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** What `createAivyxWorker` adds when tracing is on. */
export interface WorkerTracing {
  /** Bundled before our own workflow interceptors (a workflow bundle built with them is a different bundle). */
  workflowModules: readonly string[];
  activityInterceptors: ActivityInterceptorsFactory[];
  /** The sink workflow spans are exported through (they are made in the sandbox, exported here). */
  sinks: InjectedSinks<OpenTelemetrySinks>;
}

/** Tracing as started in this process. */
export interface Tracing {
  /** For `new Client({ interceptors })`. */
  clientInterceptors: ClientInterceptors;
  worker: WorkerTracing;
  /** Exports what is still buffered and stops; call after the worker and clients have stopped. */
  shutdown(): Promise<void>;
}

/** Extra span processors (tests) and the process's role, reported as `aivyx.process.role`. */
export interface TracingOptions {
  role?: string;
  /** Replaces the OTLP exporter's processor (spans still pass the redaction first). */
  processor?: SpanProcessor;
}

/** Starts tracing to `settings`' collector and registers it globally. */
export function startTracing(settings: TracingSettings, opts: TracingOptions = {}): Tracing {
  const resource = Resource.default().merge(
    new Resource({
      [ATTR_SERVICE_NAME]: settings.serviceName,
      [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
      [ATTR_PROCESS_PID]: process.pid,
      ...(opts.role ? { 'aivyx.process.role': opts.role } : {}),
    }),
  );
  const exporting = opts.processor ?? new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl, headers: settings.headers }));
  const processor = new RedactingSpanProcessor(exporting);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register();
  return {
    clientInterceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    worker: {
      workflowModules: WORKFLOW_TRACING_MODULES,
      activityInterceptors: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
        aivyxActivitySpans,
      ],
      sinks: { exporter: makeWorkflowExporter(processor, resource) },
    },
    shutdown: async () => {
      await provider.shutdown();
      // Unregistered, so a later start in this process (tests, a restarted stack) registers afresh.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
