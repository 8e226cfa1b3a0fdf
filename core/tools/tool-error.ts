/**
 * The one way the tool layer makes an error: the message names the tool first, `detail.tool` names
 * it too (the audit log and the channels read it there), and the kind defaults to `Tool` (a tool's
 * own failure, an outcome the model sees) — `CapabilityDenied` for a confinement refusal.
 */
import { AivyxError, type AivyxErrorKind } from '../errors.js';

export interface ToolErrorOptions {
  kind?: AivyxErrorKind;
  hint?: string;
  cause?: unknown;
  detail?: Record<string, unknown>;
}

/** An error of `tool`; a message that already starts with the tool's id is kept as it is. */
export function toolError(tool: string, message: string, options: ToolErrorOptions = {}): AivyxError {
  const { kind = 'Tool', detail, ...rest } = options;
  const text = message.startsWith(`${tool}:`) || message.startsWith(`${tool} `) ? message : `${tool}: ${message}`;
  return new AivyxError(kind, text, { detail: { tool, ...detail }, ...rest });
}

/** {@link toolError} bound to one tool, for an implementation file that makes many. */
export function toolErrorFor(tool: string): (message: string, options?: ToolErrorOptions) => AivyxError {
  return (message, options) => toolError(tool, message, options);
}
