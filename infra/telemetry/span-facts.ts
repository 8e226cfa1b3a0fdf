/**
 * Attribute values taken from activity inputs and results. Those are payloads anyone at the
 * Temporal frontend could have written, so each value is checked against what the worker itself
 * would produce (a catalog tool id, a known status, an error kind) and anything else is recorded
 * as `other`: a span attribute never carries free text.
 */
import { TRUST_TIERS } from '../../core/capability/trust-tier.js';
import { isAivyxErrorKind } from '../../core/errors.js';
import { findTool } from '../../core/tool-catalog.js';

/** What an unrecognised value is recorded as. */
export const OTHER = 'other';

/** `value` when it is one of `known`, else `other`. */
export function oneOf(value: unknown, known: readonly string[]): string {
  return typeof value === 'string' && known.includes(value) ? value : OTHER;
}

/** A catalog tool id (what the worker can run), else `other`: a model may name anything. */
export function toolName(value: unknown): string {
  return typeof value === 'string' && findTool(value) ? value : OTHER;
}

/** An AivyxError kind, else `other`. */
export function errorKind(value: unknown): string {
  return isAivyxErrorKind(value) ? value : OTHER;
}

/** A trust tier, else `other`. */
export function trustTier(value: unknown): string {
  return oneOf(value, TRUST_TIERS);
}

/** A channel instance name (`cli`, `telegram`, `email-work`…): a short identifier, else `other`. */
export function channelName(value: unknown): string {
  return typeof value === 'string' && /^[a-z][a-z0-9_-]{0,31}$/i.test(value) ? value : OTHER;
}

/** A non-negative integer, or undefined (the attribute is then left out). */
export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** `obj[key]` of an unknown value, without trusting its shape. */
export function field(obj: unknown, key: string): unknown {
  return typeof obj === 'object' && obj !== null ? (obj as Record<string, unknown>)[key] : undefined;
}
