/**
 * One definition per tool. `defineTool` takes the tool's id, description, a strict zod input object,
 * its scope rule, retry story, workflow behaviour and provenance; everything else derives from it:
 * the JSON schema the model is shown (`z.toJSONSchema`), the input parser (canonical form, every
 * refusal an `InvalidScope` naming the tool and the field), the scope a call needs, and the catalog's
 * interruptible / confirm-first / provenance sets. Pure and workflow-safe (zod is pure JS).
 */
import { z } from 'zod';
import { AivyxError } from '../errors.js';
import { isKnownScopeBase } from '../capability/scope.js';
import type { Idempotency, JsonSchema, ToolDescriptor } from '../tools.js';
import { HINT_SEPARATOR } from './fields.js';

/**
 * Where a tool's output comes from and where its input may send data (issue: untrusted content).
 * - `output`: `trusted` (the owner's own data or config), `untrusted` (written by someone else: web
 *   pages, mail, MCP servers), or `depends` (the implementation labels each result, e.g. a file inside
 *   or outside the trusted roots).
 * - `effect`: the call changes something outside the turn (a write, a send, a process).
 * - `egressFields`: input fields that name where data goes (a URL, a recipient).
 * - `contentFields`: input fields that only fill what the call carries (a message's text, a file's
 *   content, a request body): untrusted data there steers nothing. Every other field carries
 *   authority (a recipient, a URL, a path, argv, a key): after untrusted content an effect runs
 *   without approval only when each of those came from the owner (core/taint.ts). `field[].key`
 *   names a key of each item of an array field (a mission step's `waitUntil`): that part is content,
 *   the rest of the field keeps its authority.
 * - `launders`: what the call writes is later read as the owner's own (a file under the trusted
 *   roots, a commit): untrusted data in its content fields still needs approval.
 */
export interface ToolProvenance {
  output: 'trusted' | 'untrusted' | 'depends';
  effect: boolean;
  egressFields?: readonly string[];
  contentFields?: readonly string[];
  launders?: boolean;
}

/** The catalog's view of a tool: the descriptor the workflow and the model see, plus what derives from its definition. */
export interface ToolDefinition<I = unknown> extends ToolDescriptor {
  /** Validates and canonicalizes an input; throws AivyxError(InvalidScope) naming the tool and the field. */
  parse(input: unknown): I;
  /** The scope a call of this parsed input needs (`requiredScope` is this over `parse`). */
  scopeOf(input: I): string;
  /** The scope base every call of this tool needs (the qualifier depends on the input). */
  scopeBase: string;
  /** A running call may be interrupted (the workflow waits for its cancellation to complete). */
  interruptible: boolean;
  /** Confirm-first by default (`AIVYX_CONFIRM_DESTRUCTIVE`): the call waits for a person's approval. */
  confirmFirst: boolean;
  provenance: ToolProvenance;
  /** One short line for the index of deferred tools (core/tool-offer.ts); absent: the description's first sentence. */
  summary?: string;
}

/** What a tool definition states. */
export interface ToolSpecInput<S extends z.ZodObject, I> {
  id: string;
  description: string;
  /** One short line (≤ 80 characters) for the index of deferred tools, when the description's first sentence is not one. */
  summary?: string;
  /**
   * A strict object (`z.strictObject`): unknown fields are refused, never silently dropped. Given as a
   * function, it is built (and checked) on first use: the workflow sandbox evaluates every module
   * once per workflow it creates, so a definition costs nothing until a turn parses that tool's input.
   */
  input: S | (() => S);
  /** Cross-field rules and the canonical form, on the field-checked input; refuse with {@link fieldError}. */
  canonical?: (parsed: z.output<S>) => I;
  /** The scope a call needs: its base, and the qualifier of this input (none: the bare base). */
  scope: { base: string; qualifier?: (input: I) => string | undefined } | { base: string; of: (input: I) => string };
  idempotency: Idempotency;
  interruptible?: boolean;
  confirmFirst?: boolean;
  provenance: ToolProvenance;
}

/** A refusal raised inside `canonical`: the parser adds the tool name (kept out of each rule). */
export class FieldError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

/** Throw from `canonical`: `"field" …` messages, with an optional hint. */
export function fieldError(message: string, hint?: string): FieldError {
  return new FieldError(message, hint);
}

function refusal(tool: string, message: string, hint?: string, cause?: unknown): AivyxError {
  return new AivyxError('InvalidScope', `${tool}: ${message}`, {
    detail: { tool },
    ...(hint === undefined ? {} : { hint }),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The model-facing schema: the input side of the zod object, without the `$schema` line providers reject. */
function jsonSchemaOf(input: z.ZodObject): JsonSchema {
  const { $schema: _drop, ...schema } = z.toJSONSchema(input, { io: 'input', target: 'draft-7', unrepresentable: 'throw' }) as Record<
    string,
    unknown
  >;
  return schema;
}

/** The first refusal of a failed parse, in our words (field builders carry `message<US>hint`). */
function firstRefusal(tool: string, error: z.ZodError): AivyxError {
  const issue = error.issues[0]!;
  // Every field builder words its own refusals (marked by the separator); anything else still names the field, never zod's text.
  if (issue.message.includes(HINT_SEPARATOR)) {
    const [message, hint] = issue.message.split(HINT_SEPARATOR);
    return refusal(tool, message!, hint || undefined);
  }
  const field = issue.path.map(String).join('.') || 'input';
  // A custom check's message is ours already (e.g. a mission step's "must be a duration such as 90s").
  if (issue.code === 'custom') return refusal(tool, `"${field}" ${issue.message}`, "see the tool's input schema");
  return refusal(tool, `"${field}" is not valid here`, "see the tool's input schema");
}

/** Defines a tool; an unknown scope base fails here, when the module loads; a non-strict input when it is built. */
export function defineTool<S extends z.ZodObject, I = z.output<S>>(spec: ToolSpecInput<S, I>): ToolDefinition<I> {
  const { id } = spec;
  if (!isKnownScopeBase(spec.scope.base))
    throw new AivyxError('Internal', `tool ${id}: unknown scope base "${spec.scope.base}"`, {
      hint: 'add the base to core/capability/scope.ts (a taxonomy change, with its tier row)',
    });
  let built: { input: S; fields: string[] } | undefined;
  const input = (): { input: S; fields: string[] } => {
    if (built) return built;
    const schema = typeof spec.input === 'function' ? spec.input() : spec.input;
    // A strict object refuses unknown keys; anything else would let a typo fall back to a default.
    if ((schema._zod.def as { catchall?: { _zod: { def: { type: string } } } }).catchall?._zod.def.type !== 'never') {
      throw new AivyxError('Internal', `tool ${id}: its input must be a z.strictObject`, {
        hint: 'unknown fields must be refused, not dropped',
      });
    }
    const fields = Object.keys(schema.shape);
    // A content field that is not an input field is a typo that would leave a field unclassified.
    const named = [...(spec.provenance.contentFields ?? []), ...(spec.provenance.egressFields ?? [])];
    const stray = named.find((f) => !fields.includes(f.split('[].')[0]!));
    if (stray !== undefined) throw new AivyxError('Internal', `tool ${id}: provenance names "${stray}", which is not an input field`);
    return (built = { input: schema, fields });
  };
  if (typeof spec.input !== 'function') input();
  const parse = (raw: unknown): I => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw refusal(id, 'input must be a JSON object');
    const { input: schema, fields } = input();
    // A wrong field name is reported first, with the allowed ones: the likeliest mistake, the clearest fix.
    const unknown = Object.keys(raw).find((k) => !fields.includes(k));
    if (unknown !== undefined) throw refusal(id, `unknown input field "${unknown}"`, `allowed fields: ${fields.join(', ')}`);
    const checked = schema.safeParse(raw);
    if (!checked.success) throw firstRefusal(id, checked.error);
    try {
      return spec.canonical ? spec.canonical(checked.data) : (checked.data as I);
    } catch (err) {
      if (err instanceof FieldError) throw refusal(id, err.message, err.hint);
      throw err;
    }
  };
  const scope = spec.scope;
  const scopeOf = (value: I): string => {
    if ('of' in scope) return scope.of(value);
    const q = scope.qualifier?.(value);
    return q === undefined ? scope.base : `${scope.base}:${q}`;
  };
  // Built on first use (an LLM step's tool list, in an activity), like the input.
  let schema: JsonSchema | undefined;
  return Object.freeze({
    id,
    description: spec.description,
    get inputSchema(): JsonSchema {
      return (schema ??= jsonSchemaOf(input().input));
    },
    requiredScope: (raw: unknown): string => scopeOf(parse(raw)),
    idempotency: spec.idempotency,
    parse,
    scopeOf,
    scopeBase: scope.base,
    interruptible: spec.interruptible ?? false,
    confirmFirst: spec.confirmFirst ?? false,
    provenance: Object.freeze({ ...spec.provenance }),
    ...(spec.summary === undefined ? {} : { summary: spec.summary }),
  });
}
