/**
 * Tool input schemas as the model is shown them: the catalog's JSON schemas without the bounds the
 * tool's own parser enforces anyway (lengths, counts, numeric limits, long regexes). A model that
 * oversteps one gets the parser's error as the tool result, in words; the schema it pays for on
 * every request keeps only what it needs to write a valid call.
 */

type Json = Record<string, unknown>;

/** Keywords dropped everywhere: bounds that cost tokens on every request and help no model choose. */
const DROPPED = new Set(['maxLength', 'minLength', 'maxItems', 'minItems', 'maximum', 'minimum', '$schema']);
/** A regex longer than this is dropped (the field's description says the form in words). */
const PATTERN_MAX = 16;

function compactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compactValue);
  if (typeof value === 'object' && value !== null) return compactSchema(value as Json);
  return value;
}

/** `anyOf` of plain typed alternatives (`{type:'number'}|{type:'string'}`) as one `type` list. */
function mergedTypes(anyOf: unknown): string[] | undefined {
  if (!Array.isArray(anyOf) || anyOf.length < 2) return undefined;
  const types = anyOf.map((a) => (typeof a === 'object' && a !== null && Object.keys(a).length === 1 ? (a as Json).type : undefined));
  return types.every((t): t is string => typeof t === 'string') ? types : undefined;
}

/** The schema the model is shown for `schema` (a new object; key order kept, so output is deterministic). */
export function compactSchema(schema: Json): Json {
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue;
    if (key === 'pattern' && typeof value === 'string' && value.length > PATTERN_MAX) continue;
    // Unknown keys are refused by the tool's parser (with a hint): the model need not be told so on every request.
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'anyOf') {
      const compacted = compactValue(value);
      const types = mergedTypes(compacted);
      if (types) out.type = types;
      else out.anyOf = compacted;
      continue;
    }
    out[key] = key === 'properties' ? compactProperties(value as Json) : compactValue(value);
  }
  return out;
}

function compactProperties(props: Json): Json {
  return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, compactValue(v)]));
}
