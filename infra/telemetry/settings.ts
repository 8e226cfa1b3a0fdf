/**
 * Whether and where this process sends traces, from the standard OpenTelemetry variables (declared
 * in infra/config/env-table.ts): tracing is off unless an OTLP endpoint is set.
 */
import { AivyxError } from '../../core/errors.js';
import { envValue } from '../config/parse-env.js';

/** Where traces go and under which service name. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (`…/v1/traces`). */
  tracesUrl: string;
  serviceName: string;
  /** Sent with every export (may hold a collector's API key: never logged). */
  headers: Record<string, string>;
}

/** The traces URL the OTLP spec derives from a base endpoint: `<endpoint>/v1/traces`. */
function tracesUrlOf(endpoint: string): string {
  return `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** `key=value,key2=value2` (values percent-decoded, as the OTLP exporter spec says). */
function parseHeaders(raw: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    // The value is never echoed: it is usually a credential.
    if (eq <= 0)
      throw new AivyxError('Config', 'OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs, comma-separated', { hint: 'fix or unset it' });
    headers[pair.slice(0, eq).trim()] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  return headers;
}

/** The tracing settings `env` asks for, or undefined when no OTLP endpoint is set (tracing off). */
export function tracingSettingsFromEnv(env: Record<string, string | undefined>): TracingSettings | undefined {
  const traces = envValue(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = envValue(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const tracesUrl = traces ?? (base === undefined ? undefined : tracesUrlOf(base));
  if (tracesUrl === undefined) return undefined;
  return {
    tracesUrl,
    serviceName: envValue(env, 'OTEL_SERVICE_NAME'),
    headers: parseHeaders(envValue(env, 'OTEL_EXPORTER_OTLP_HEADERS')),
  };
}
