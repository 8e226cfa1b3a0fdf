/**
 * Input validation shared by every tool descriptor: one error shape (InvalidScope naming the tool),
 * unknown fields refused, absolute paths normalized lexically. Workflow-safe: no Node imports.
 */
import { AivyxError } from '../errors.js';
import { normalizePosixPath } from '../path.js';

/** An InvalidScope error naming the tool. */
export function invalid(tool: string, message: string, hint?: string): AivyxError {
  return new AivyxError('InvalidScope', `${tool}: ${message}`, { detail: { tool }, ...(hint === undefined ? {} : { hint }) });
}

/** The input as a record, refusing anything but a JSON object and any field not in `allowed`. */
export function asRecord(tool: string, input: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid(tool, 'input must be a JSON object');
  const rec = input as Record<string, unknown>;
  // Unknown keys are refused: a typo like `pth` must not silently fall back to a default.
  for (const key of Object.keys(rec)) {
    if (!allowed.includes(key)) throw invalid(tool, `unknown input field "${key}"`, `allowed fields: ${allowed.join(', ')}`);
  }
  return rec;
}

/** A non-empty absolute path, lexically normalized (no `..` above root); errors name the tool. */
export function absolutePath(tool: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalid(tool, `"${field}" must be a non-empty string`);
  if (!value.startsWith('/'))
    throw invalid(tool, `"${field}" must be an absolute path, got "${value}"`, 'give the full path, starting with /');
  try {
    return normalizePosixPath(value);
  } catch (cause) {
    if (cause instanceof AivyxError)
      throw new AivyxError(cause.kind, `${tool}: ${cause.message}`, {
        detail: { tool },
        ...(cause.hint === undefined ? {} : { hint: cause.hint }),
        cause,
      });
    throw cause;
  }
}

/** An integer in 1..max. */
export function positiveInt(tool: string, field: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(tool, `"${field}" must be an integer between 1 and ${max}`);
  }
  return value;
}
