/**
 * The last word on what leaves this process in a span. Every span (our own, the Temporal
 * interceptors', and workflow spans arriving through the sink, which carry the whole WorkflowInfo:
 * memo, last result, search attributes) passes through here before export, and only an allow-list
 * survives: Temporal's ids, a few workflow facts, and the `gen_ai.*`/`aivyx.*` attributes our own
 * spans set from values the worker produced. Error messages and stack traces are dropped (only the
 * error's type remains): a failure's message can quote what a tool read or a provider echoed.
 */
import type { Context, SpanAttributes, SpanAttributeValue } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';

/** Attribute keys kept as they are (Temporal interceptors' ids, and the WorkflowInfo fields worth having). */
const KEPT_KEYS = new Set([
  'temporalWorkflowId',
  'temporalActivityId',
  'temporalUpdateId',
  'run_id',
  'workflowId',
  'runId',
  'workflowType',
  'taskQueue',
  'namespace',
  'attempt',
  // Set by our spans to an AivyxError kind (infra/telemetry/span-facts.ts).
  'error.type',
]);

/** Prefixes only our own span code sets (infra/telemetry). */
const KEPT_PREFIXES = ['gen_ai.', 'aivyx.'];

function isPlain(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** Whether attribute `key` with `value` may leave the process. */
export function attributeAllowed(key: string, value: unknown): value is SpanAttributeValue {
  if (!KEPT_KEYS.has(key) && !KEPT_PREFIXES.some((p) => key.startsWith(p))) return false;
  return isPlain(value) || (Array.isArray(value) && value.every((v) => v == null || isPlain(v)));
}

/** `attrs` without anything off the allow-list. */
export function redactAttributes(attrs: SpanAttributes | undefined): SpanAttributes {
  const kept: SpanAttributes = {};
  for (const [k, v] of Object.entries(attrs ?? {})) if (attributeAllowed(k, v)) kept[k] = v;
  return kept;
}

/** An exception event keeps its type only; other events keep their name and allowed attributes. */
function redactEvent(e: TimedEvent): TimedEvent {
  const type = e.attributes?.['exception.type'];
  const attributes = e.name === 'exception' ? (isPlain(type) ? { 'exception.type': type } : {}) : redactAttributes(e.attributes);
  return { name: e.name, time: e.time, attributes };
}

/** A copy of `span` holding only what may be exported. */
export function redactSpan(span: ReadableSpan): ReadableSpan {
  return {
    name: span.name,
    kind: span.kind,
    spanContext: () => span.spanContext(),
    ...(span.parentSpanId === undefined ? {} : { parentSpanId: span.parentSpanId }),
    startTime: span.startTime,
    endTime: span.endTime,
    // The status message is an error's message: dropped like the exception's.
    status: { code: span.status.code },
    attributes: redactAttributes(span.attributes),
    links: span.links.map((l) => ({ context: l.context })),
    events: span.events.map(redactEvent),
    duration: span.duration,
    ended: span.ended,
    resource: span.resource,
    instrumentationLibrary: span.instrumentationLibrary,
    droppedAttributesCount: span.droppedAttributesCount,
    droppedEventsCount: span.droppedEventsCount,
    droppedLinksCount: span.droppedLinksCount,
  };
}

/** Hands `inner` (the exporting processor) redacted copies of ended spans. */
export class RedactingSpanProcessor implements SpanProcessor {
  constructor(private readonly inner: SpanProcessor) {}

  onStart(span: Span, parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    this.inner.onEnd(redactSpan(span));
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
