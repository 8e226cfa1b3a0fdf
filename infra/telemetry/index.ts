/** Traces (OpenTelemetry over OTLP/HTTP): settings from the environment, the process's tracing, our spans and their redaction. */
export { tracingSettingsFromEnv, type TracingSettings } from './settings.js';
export { startTracing, type Tracing, type TracingOptions, type WorkerTracing } from './tracing.js';
export { tracedLlmProvider } from './llm-spans.js';
export { redactSpan, RedactingSpanProcessor } from './span-redaction.js';
export { isRedactedField, LOG_FORMATS, processLogs, redactLogFields, REDACTED, type LogFormat, type ProcessLogs } from './logs.js';
