/**
 * Tool descriptors: the workflow-visible half of a tool. Scope requirements are pure
 * functions of the input so the workflow can check them deterministically before it
 * schedules the activity (which re-checks).
 */
import type { ToolOutcome } from './outcomes.js';

/** JSON schema for a tool's input (what the model is shown). */
export type JsonSchema = Record<string, unknown>;

/** How a tool's activity behaves on retry (see docs/IDEMPOTENCY.md). */
export type Idempotency = 'natural' | 'keyed' | 'at-most-once';

/** A tool as the core knows it: identity, model-facing description, input schema and scope rule. */
export interface ToolDescriptor {
  /** Dotted id, e.g. `fs.read`. */
  id: string;
  description: string;
  inputSchema: JsonSchema;
  /** The scope this particular call needs; throws `AivyxError(InvalidScope)` for bad input. */
  requiredScope(input: unknown): string;
  idempotency: Idempotency;
}

/** One tool call requested by the model. `callId` is unique within the turn. */
export interface ToolCall {
  callId: string;
  tool: string;
  input: unknown;
}

/** A tool call paired with its outcome, fed back to the model. */
export interface ToolResult {
  callId: string;
  tool: string;
  outcome: ToolOutcome;
}
