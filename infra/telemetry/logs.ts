/**
 * The process's log lines as text (`aivyx: …`, the default) or as JSON objects, one per line, for a
 * log pipeline (`AIVYX_LOG_FORMAT=json`). JSON lines carry structured fields (the Temporal SDK's
 * metadata: workflow and activity ids, attempts), so every field goes through `redactLogFields`
 * first: fields that may hold a secret or what someone wrote are replaced, whatever logged them.
 */
import type { LogEntry } from '@temporalio/worker';

/** The formats `AIVYX_LOG_FORMAT` selects. */
export const LOG_FORMATS = ['text', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** What replaces a redacted value. */
export const REDACTED = '[redacted]';

// Secrets by name anywhere in a key; content-bearing fields (message text, tool inputs and outputs,
// model prompts, payloads) by exact name, so `messageId` or `inputHash` stay.
const SECRET_KEY = /token|passphrase|password|secret|api[-_]?key|authorization|cookie|credential|private[-_]?key|signature/i;
const CONTENT_KEY =
  /^(text|message|content|body|input|inputs|args|arguments|prompt|history|transcript|output|result|results|lastResult|memo|payload|payloads|details|finalMessage|pendingInput|say)$/i;
const MAX_DEPTH = 6;

/** Whether a field named `key` is dropped from structured logs. */
export function isRedactedField(key: string): boolean {
  return SECRET_KEY.test(key) || CONTENT_KEY.test(key);
}

/** `value` with every secret- or content-bearing field replaced by `[redacted]`, recursively (errors keep their name and kind only: a message can quote tool output or the prompt). */
export function redactLogFields(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (depth >= MAX_DEPTH) return '[…]';
  if (value instanceof Error) {
    const kind = (value as { kind?: unknown; type?: unknown }).kind ?? (value as { type?: unknown }).type;
    return { name: value.name, ...(typeof kind === 'string' ? { kind } : {}) };
  }
  if (Array.isArray(value)) return value.map((v) => redactLogFields(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isRedactedField(k) ? REDACTED : redactLogFields(v, depth + 1);
  return out;
}

/** One JSON log line (with its newline). */
export function jsonLogLine(level: string, msg: string, fields?: Record<string, unknown>, time = new Date()): string {
  const rest = fields ? (redactLogFields(fields) as Record<string, unknown>) : {};
  return `${JSON.stringify({ ...rest, time: time.toISOString(), level: level.toLowerCase(), pid: process.pid, msg })}\n`;
}

/** The process's logging in `format`, written through `write` (stderr). */
export interface ProcessLogs {
  /** A progress line of aivyx's own (`startStack`'s `log`). */
  line(text: string): void;
  /** For `new DefaultLogger(level, fn)` in `Runtime.install`: the SDK's lines; undefined keeps the SDK's text format. */
  sdk: ((entry: LogEntry) => void) | undefined;
}

/** Logging in `format`. */
export function processLogs(format: LogFormat, write: (s: string) => void): ProcessLogs {
  if (format === 'text') return { line: (text) => write(`aivyx: ${text}\n`), sdk: undefined };
  return {
    line: (text) => write(jsonLogLine('info', text, { logger: 'aivyx' })),
    sdk: (entry) =>
      write(
        jsonLogLine(entry.level, entry.message, { logger: 'temporal', ...entry.meta }, new Date(Number(entry.timestampNanos / 1_000_000n))),
      ),
  };
}
