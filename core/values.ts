/**
 * Values with labels (docs/SECURITY.md, "The value model"). An untrusted result is not pasted into
 * the planning model's context: the worker keeps it as a *value* and the model sees a handle — its
 * id, kind, size and source label. The model passes a value on by writing its reference,
 * `{{value:v0123456789ab}}`, in a tool argument; the worker substitutes it and knows, field by field,
 * which arguments came from untrusted data. Pure and workflow-safe.
 */
import { AivyxError } from './errors.js';
import type { TranscriptItem } from './llm.js';

/** A value's id: `v` and 12 hex digits (derived from the call that produced it). */
export const VALUE_ID = /^v[0-9a-f]{12}$/;
/** A reference to a value inside a string argument. */
const VALUE_REF = /\{\{value:(v[0-9a-f]{12})\}\}/g;

/** How long a value can be used after it was read: as long as a gate waits for a person (72 hours). */
export const VALUE_TTL_MS = 72 * 60 * 60 * 1000;

/** What the planning model is shown instead of an untrusted result. */
export interface ValueHandle {
  value: string;
  kind: 'text' | 'json';
  /** Characters of its text form. */
  size: number;
  /** Where it came from ("a page from evil.example"). */
  from: string;
  /** How to use it, in the result itself: the model needs no other instructions. */
  use: string;
}

/** The reference the model writes for value `id`. */
export function valueRef(id: string): string {
  return `{{value:${id}}}`;
}

/** The handle the model is shown for a held value. */
export function valueHandle(id: string, kind: ValueHandle['kind'], size: number, from: string): ValueHandle {
  return {
    value: id,
    kind,
    size,
    from,
    use: `untrusted content, held for you: pass ${valueRef(id)} inside a tool argument (it is substituted when the call runs), read it with value.read, or put ${valueRef(id)} in your answer to show it to the owner`,
  };
}

/** The value ids referenced by each top-level field of a call's input, in order. */
export function refsByField(input: unknown): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return out;
  for (const [field, v] of Object.entries(input)) {
    const ids = refsIn(v);
    if (ids.length > 0) out.set(field, ids);
  }
  return out;
}

/** Every value id referenced anywhere inside `value`. */
export function refsIn(value: unknown): string[] {
  if (typeof value === 'string') return [...value.matchAll(VALUE_REF)].map((m) => m[1]!);
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(refsIn);
  return [];
}

/** The fields a tool result keeps its text in: a page's body, a file's content, a command's stdout, a quarantined answer. */
const TEXT_FIELDS = ['body', 'content', 'stdout', 'answer'] as const;

/**
 * A value's text form (what a reference becomes): a string as it is; a result's text where it has one
 * (a fetched page's body, a file's content, an MCP result's text parts, a command's stdout, a
 * quarantined answer); anything else as JSON.
 */
export function valueText(body: unknown): string {
  if (typeof body === 'string') return body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    for (const f of TEXT_FIELDS) {
      const v = fields[f];
      if (typeof v === 'string') return v;
      if (f === 'content' && Array.isArray(v) && v.every((p) => typeof (p as { text?: unknown })?.text === 'string'))
        return v.map((p) => (p as { text: string }).text).join('\n');
      if (f === 'answer' && v !== undefined) return typeof v === 'string' ? v : JSON.stringify(v);
    }
  }
  return JSON.stringify(body);
}

/**
 * `input` with every reference replaced by its value's text. A reference where the call needs a
 * structure (an MCP call's arguments) does not fit: read what is needed with value.read instead.
 * `lookup` throws for a value the call may not use.
 */
export function substituteRefs(input: unknown, lookup: (id: string) => unknown): unknown {
  if (typeof input === 'string') return input.replace(VALUE_REF, (_m, id: string) => valueText(lookup(id)));
  if (Array.isArray(input)) return input.map((v) => substituteRefs(v, lookup));
  if (input !== null && typeof input === 'object')
    return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, substituteRefs(v, lookup)]));
  return input;
}

/** What a specialist shows its lead when its answer renders values `ids`: their sources, as the handles in `transcript` name them. */
export function renderedSources(transcript: readonly TranscriptItem[], ids: readonly string[]): string[] {
  const from = new Map<string, string>();
  for (const item of transcript)
    if (item.role === 'tool')
      for (const r of item.results) {
        const h = (r.outcome.status === 'Completed' ? r.outcome.output : undefined) as Partial<ValueHandle> | undefined;
        if (typeof h?.value === 'string' && typeof h.from === 'string') from.set(h.value, h.from);
      }
  // An id with no handle here renders as a refusal, or as a value of the context this turn continues: held content all the same.
  return [...new Set(ids.map((id) => from.get(id) ?? 'a value it held'))];
}

/** The error for a value the call cannot use (unknown, another turn's, expired): the model is told how to go on. */
export function valueRefusal(id: string, why: string): AivyxError {
  return new AivyxError('NotFound', `value ${id} ${why}`, {
    detail: { kind: 'value', id },
    hint: 'use a value this turn read (its handle says {"value": "v…"}); read the source again if it expired',
  });
}
