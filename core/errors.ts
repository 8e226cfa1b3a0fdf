/**
 * The seed's Deliverable 6 error contract: exactly 14 kinds, carried as data so it
 * crosses the workflow sandbox, activity boundaries and JSON payloads unchanged.
 * Callers branch on `kind` (never on `instanceof` across the sandbox).
 */

/** The 14 error kinds of Deliverable 6 (a 15th needs a note in DESIGN.md). */
export const AIVYX_ERROR_KINDS = [
  'Config',
  'Storage',
  'Crypto',
  'CapabilityDenied',
  'InvalidScope',
  'Llm',
  'Tool',
  'ToolEscalation',
  'Channel',
  'Audit',
  'Timeout',
  'Cancelled',
  'NotFound',
  'Internal',
] as const;

/** One of the 14 kinds; also used as the `ApplicationFailure.type` of a failed turn or activity. */
export type AivyxErrorKind = (typeof AIVYX_ERROR_KINDS)[number];

/** Serializable detail of an error: what a caller needs to decide, plus a hint for a person. */
export interface AivyxErrorData {
  kind: AivyxErrorKind;
  message: string;
  /** What the person reading this can do about it. */
  hint?: string;
  /** Kind-specific detail (e.g. `scope`/`held` for CapabilityDenied, `tool` for Tool). */
  detail?: Record<string, unknown>;
}

/**
 * The one error class of the core domain. Thrown by pure code (scope parsing,
 * capability checks, size limits) and by adapters that translate their own failures.
 */
export class AivyxError extends Error {
  readonly kind: AivyxErrorKind;
  readonly hint: string | undefined;
  readonly detail: Record<string, unknown> | undefined;

  constructor(kind: AivyxErrorKind, message: string, options: { hint?: string; detail?: Record<string, unknown>; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = `AivyxError(${kind})`;
    this.kind = kind;
    this.hint = options.hint;
    this.detail = options.detail;
  }

  /** Plain-data form for payloads and audit entries. */
  toData(): AivyxErrorData {
    const data: AivyxErrorData = { kind: this.kind, message: this.message };
    if (this.hint !== undefined) data.hint = this.hint;
    if (this.detail !== undefined) data.detail = this.detail;
    return data;
  }
}

/** True when `value` names one of the 14 kinds (used to read `ApplicationFailure.type`). */
export function isAivyxErrorKind(value: unknown): value is AivyxErrorKind {
  return typeof value === 'string' && (AIVYX_ERROR_KINDS as readonly string[]).includes(value);
}

/** A person-readable one-liner: message plus hint. */
export function describeError(e: AivyxErrorData): string {
  return e.hint ? `${e.kind}: ${e.message} (${e.hint})` : `${e.kind}: ${e.message}`;
}
