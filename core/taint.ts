/**
 * Untrusted content cannot steer effects (docs/SECURITY.md). Once a turn has untrusted content in
 * its context (a message from someone other than the owner, a fetched page, a file outside the
 * trusted roots, an MCP result, a memory written after untrusted content), every effect or egress
 * call needs a person's approval of that exact call, or is refused, as the taint policy says per
 * tool. The decision is made here, on data the workflow holds, so it is deterministic and
 * replay-safe; the runTool activity re-checks it against what the worker itself recorded. Nothing
 * here depends on the model: the model is assumed to obey whatever it read.
 */
import { AivyxError } from './errors.js';
import type { ToolDefinition } from './tools/define-tool.js';

/** What a tainted turn does with a call of a tool: ask a person (`gate`), refuse (`deny`), or run it (`allow`, an explicit owner choice). */
export type TaintAction = 'gate' | 'deny' | 'allow';

/** Per-tool overrides of the default (`gate` for every effect or egress tool); `AIVYX_TAINT_POLICY`. */
export type TaintPolicy = Readonly<Record<string, TaintAction>>;

/** What the workflow tells runTool about a call made after untrusted content. */
export interface CallTaint {
  /** Where the untrusted content came from, in words a person reads ("a message from x@y (Untrusted)"). */
  sources: string[];
  /** `free`: a read, or an effect whose every authority field came from the owner. */
  action: TaintAction | 'free';
  /** Why an effect is not free: the authority field whose value the owner did not give (or "content", for a tool that launders it). */
  field?: string;
}

/**
 * How the owner classified an MCP server's tool (`AIVYX_MCP_TOOLS`): a read (its calls are never
 * stopped), or the argument names that only carry content (every other argument carries authority).
 * An unclassified MCP tool is an effect whose every argument carries authority.
 */
export type McpToolClass = 'read' | { content: readonly string[] };

/** Classifications by `server/tool`. */
export type McpClassification = Readonly<Record<string, McpToolClass>>;

/** How many sources a decision names (the rest are counted): an approval request stays readable. */
const MAX_SOURCES = 5;

const ACTIONS: readonly TaintAction[] = ['gate', 'deny', 'allow'];

/** True when calls of this tool are effects or may send data somewhere (what taint governs). */
export function taintGoverns(tool: ToolDefinition): boolean {
  return tool.provenance.effect || (tool.provenance.egressFields?.length ?? 0) > 0;
}

/** The stricter of two actions (deny > gate > allow > free). */
export function stricter(a: CallTaint['action'], b: CallTaint['action']): CallTaint['action'] {
  const rank = { free: 0, allow: 1, gate: 2, deny: 3 } as const;
  return rank[a] >= rank[b] ? a : b;
}

/** The policy's action for an effect or egress tool (default `gate`). */
export function policyAction(tool: string, policy: TaintPolicy): TaintAction {
  return policy[tool] ?? 'gate';
}

/**
 * A turn's taint: the untrusted sources in its context, and the text that came from trusted places
 * (the owner's message, the owner's identities from configuration, trusted reads' results). After
 * untrusted content an effect is free only when every value of its authority fields (every input
 * field but its content fields: a recipient, a URL, a path, argv) appears in that trusted text: the
 * owner named it. Content fields may hold anything (a summary of the page, sent to the owner), except
 * for a tool that launders what it writes into the owner's own data (a file, a commit).
 */
export class TurnTaint {
  private readonly seen: string[] = [];
  private trustedText: string;
  /** Typed answers of quarantined reads the model was shown (a number, a date): chosen by untrusted data. */
  private readonly derived: { value: string; source: string }[] = [];

  constructor(
    sources: readonly string[],
    trustedText: string,
    private readonly mcpTools: McpClassification = {},
  ) {
    for (const s of sources) this.add(s);
    this.trustedText = trustedText;
  }

  get tainted(): boolean {
    return this.seen.length > 0;
  }

  get sources(): string[] {
    return [...this.seen];
  }

  /** Notes one untrusted source (deduplicated, in order of arrival). */
  add(source: string): void {
    if (!this.seen.includes(source)) this.seen.push(source);
  }

  /** Notes text from a trusted read's result (a destination it names is then the owner's). */
  addTrusted(text: string): void {
    this.trustedText += `\n${text}`;
  }

  /**
   * Notes a quarantined read's typed answer the model was shown: it cannot carry instructions, but
   * the data chose it, so it may not fill an authority field the owner did not name.
   */
  addDerived(value: string, source: string): void {
    if (value !== '' && !this.derived.some((d) => d.value === value)) this.derived.push({ value, source });
  }

  /** What a call of `tool` with this (parsed, canonical) input needs now. */
  decide(tool: ToolDefinition, input: unknown, policy: TaintPolicy): CallTaint | undefined {
    const classified = mcpView(tool, input, this.mcpTools);
    if (classified === 'read') return this.tainted ? { sources: this.sources, action: 'free' } : undefined;
    return classified ? this.decideCall(classified.tool, classified.input, policy) : this.decideCall(tool, input, policy);
  }

  /** The decision for a call as the rule reads it (an MCP call with its arguments as fields). */
  private decideCall(tool: ToolDefinition, input: unknown, policy: TaintPolicy): CallTaint | undefined {
    if (!this.tainted) return this.decideDerived(tool, input, policy);
    const sources = this.sources;
    if (!taintGoverns(tool)) return { sources, action: 'free' };
    const field = unvouchedField(tool, input, (v) => mentions(this.trustedText, v));
    if (field === undefined) return { sources, action: 'free' };
    return { sources, action: policyAction(tool.id, policy), field };
  }

  /** A clean turn's call: only an authority field holding a shown answer (that the owner did not name) is not the owner's. */
  private decideDerived(tool: ToolDefinition, input: unknown, policy: TaintPolicy): CallTaint | undefined {
    if (this.derived.length === 0 || !taintGoverns(tool)) return undefined;
    let source: string | undefined;
    const chosen = (v: string): boolean => {
      source = this.derived.find((d) => holdsAnswer(v, d.value))?.source;
      return source === undefined || mentions(this.trustedText, v);
    };
    // In a clean turn the model chose every other value itself: only the shown answers are the data's.
    const field = unvouchedField(tool, input, chosen, { trueIsOwners: true, launders: false });
    if (field === undefined || source === undefined) return undefined;
    return { sources: [source], action: policyAction(tool.id, policy), field };
  }
}

/**
 * An `mcp.call` as its classification makes it: `read`, or the call with each argument as its own
 * field (`arguments.<name>`) and the content arguments marked so; undefined for an unclassified tool.
 */
function mcpView(
  tool: ToolDefinition,
  input: unknown,
  classes: McpClassification,
): 'read' | { tool: ToolDefinition; input: Record<string, unknown> } | undefined {
  const rule = mcpRule(tool, input, classes);
  return rule === undefined || rule === 'read' ? rule : { tool: rule, input: mcpFields(input) };
}

/**
 * The rule an `mcp.call` is judged by: `read` for a tool the owner classified as a read; for one whose
 * content arguments the owner named, `mcp.call` with `arguments.<name>` as its content fields;
 * undefined for any other call (an unclassified MCP tool keeps every argument as authority).
 */
export function mcpRule(tool: ToolDefinition, input: unknown, classes: McpClassification): 'read' | ToolDefinition | undefined {
  if (tool.id !== 'mcp.call') return undefined;
  const { server, tool: name } = (input ?? {}) as { server?: unknown; tool?: unknown };
  const cls = classes[`${String(server)}/${String(name)}`];
  if (cls === undefined || cls === 'read') return cls;
  const contentFields = cls.content.map((c) => `arguments.${c}`);
  return { ...tool, provenance: { ...tool.provenance, contentFields } };
}

/** An `mcp.call`'s input with each argument as its own field: `{server, tool, "arguments.<name>": …}`. */
export function mcpFields(input: unknown): Record<string, unknown> {
  const { server, tool, arguments: args } = (input ?? {}) as { server?: unknown; tool?: unknown; arguments?: unknown };
  const named = args !== null && typeof args === 'object' && !Array.isArray(args);
  const flat = named ? Object.entries(args as Record<string, unknown>).map(([k, v]) => [`arguments.${k}`, v] as const) : [];
  return { server, tool, ...(named ? {} : args === undefined ? {} : { arguments: args }), ...Object.fromEntries(flat) };
}

/**
 * Parses `AIVYX_MCP_TOOLS`: `server/tool=read` or `server/tool=content:arg1+arg2`, comma-separated,
 * e.g. `mail/search=read,mail/send=content:body+subject`. A typo must not silently classify nothing.
 */
export function parseMcpClassification(raw: string): McpClassification {
  const out: Record<string, McpToolClass> = {};
  const hint = 'write server/tool=read or server/tool=content:arg+arg, comma-separated';
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [key, cls, ...rest] = part.split('=').map((s) => s.trim());
    if (!key || !/^[A-Za-z0-9_-]+\/[A-Za-z0-9_.-]+$/.test(key) || cls === undefined || rest.length > 0)
      throw new AivyxError('Config', `AIVYX_MCP_TOOLS: "${part}" is not server/tool=class`, { hint });
    if (cls === 'read') out[key] = 'read';
    else if (/^content:[A-Za-z0-9_-]+(\+[A-Za-z0-9_-]+)*$/.test(cls)) out[key] = { content: cls.slice('content:'.length).split('+') };
    else throw new AivyxError('Config', `AIVYX_MCP_TOOLS: "${cls}" is not read or content:<args> for ${key}`, { hint });
  }
  return Object.freeze(out);
}

/** The input fields of `tool` that carry authority: all but its content fields. */
function authorityFields(tool: ToolDefinition, input: Record<string, unknown>): string[] {
  const content = tool.provenance.contentFields ?? [];
  return Object.keys(input).filter((f) => !content.includes(f));
}

/** Every scalar inside a field's value (argv's items, a header map's values). */
function leaves(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(leaves);
  return [value];
}

/** The keys a tool's `field[].key` content paths name inside `field`'s items. */
function contentKeys(tool: ToolDefinition, field: string): string[] {
  return (tool.provenance.contentFields ?? []).flatMap((p) => (p.startsWith(`${field}[].`) ? [p.slice(field.length + 3)] : []));
}

/**
 * Every scalar of the call's authority fields, with its field: a field's content paths (a mission
 * step's `waitUntil`: when, not who, where or what) are left out, the rest of it is in.
 */
export function authorityLeaves(tool: ToolDefinition, input: Record<string, unknown>): { field: string; leaf: unknown }[] {
  return authorityFields(tool, input).flatMap((field) => {
    const keys = contentKeys(tool, field);
    const value = input[field];
    const items = Array.isArray(value) && keys.length > 0 ? value.map((item) => withoutKeys(item, keys)) : value;
    return leaves(items).map((leaf) => ({ field, leaf }));
  });
}

/** An array item without its content keys (an item that is not an object is kept whole). */
function withoutKeys(item: unknown, keys: readonly string[]): unknown {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
  return Object.fromEntries(Object.entries(item).filter(([k]) => !keys.includes(k)));
}

/**
 * The first field that makes a call of `tool` not the owner's: an authority field holding a value
 * `vouched` does not know, or "content" for a tool that launders untrusted content. `false`, null and
 * empty values name nothing; anything else must be vouched for.
 */
export function unvouchedField(
  tool: ToolDefinition,
  input: unknown,
  vouched: (value: string) => boolean,
  opts: { trueIsOwners?: boolean; launders?: boolean } = {},
): string | undefined {
  const fields = (input ?? {}) as Record<string, unknown>;
  for (const { field, leaf } of authorityLeaves(tool, fields)) {
    if (leaf === undefined || leaf === null || leaf === false || leaf === '') continue;
    if (leaf === true) {
      if (opts.trueIsOwners) continue;
      return field;
    }
    if ((typeof leaf !== 'string' && typeof leaf !== 'number') || !vouched(String(leaf))) return field;
  }
  const launders = opts.launders ?? tool.provenance.launders;
  if (launders && (tool.provenance.contentFields ?? []).some((f) => fields[f] !== undefined)) return 'content';
  return undefined;
}

/** Characters that continue a token: a value found next to one of them is part of something longer. */
const TOKEN = /[A-Za-z0-9_%+\-@~/]/;

/** True when `value` appears in `text` as a whole token ("bob@x.com" is not in "bob@x.com.evil.example"). */
export function mentions(text: string, value: string): boolean {
  if (value.trim() === '') return true;
  // A canonical URL gains a trailing slash the owner did not type ("https://example.com" → ".../").
  const forms = value.endsWith('/') && value.length > 1 ? [value, value.slice(0, -1)] : [value];
  return forms.some((form) => {
    for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) {
      const before = at === 0 ? '' : text[at - 1]!;
      const after = text.slice(at + form.length, at + form.length + 2);
      // Sentence punctuation after a token ends it ("mail bob@x.com."), a dot inside a name does not.
      const ends = after === '' || (!TOKEN.test(after[0]!) && !(after[0] === '.' && after.length > 1 && TOKEN.test(after[1]!)));
      if (!TOKEN.test(before) && before !== '.' && ends) return true;
    }
    return false;
  });
}

/** A letter or digit: what continues a number, a date or a word (a dot continues it only before another). */
const ALNUM = /[A-Za-z0-9]/;

/** A date as a quarantined read answers it: in a local time or an instant it is followed by `T` and the hour. */
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * True when a quarantined answer stands in `field` as itself, even inside a longer token: `666` in
 * "+666", "/orders/666/" or "tel:666" is the data's number, while "6660" or "1.666" is another; the
 * date `2027-06-15` is in "2027-06-15T09:00". (`mentions` asks the opposite question, whether the
 * owner named a whole value, and must not be this lax.)
 */
export function holdsAnswer(field: string, answer: string): boolean {
  const continues = (c: string | undefined, next: string | undefined) =>
    c !== undefined && (ALNUM.test(c) || (c === '.' && next !== undefined && ALNUM.test(next)));
  const timeOf = (c: string | undefined, next: string | undefined) => DATE.test(answer) && c === 'T' && /\d/.test(next ?? '');
  for (let at = field.indexOf(answer); at >= 0; at = field.indexOf(answer, at + 1)) {
    const end = at + answer.length;
    const after = timeOf(field[end], field[end + 1]) || !continues(field[end], field[end + 1]);
    if (!continues(field[at - 1], field[at - 2]) && after) return true;
  }
  return false;
}

/**
 * The label of a result the worker did not vouch for (the activity failed, or its completion came
 * from somewhere else): whatever the workflow holds for it may have been written by anyone.
 */
export function unvouchedLabel(tool: string): string {
  return `${tool} (a result the worker did not vouch for)`;
}

/** Between the sources of a stored label. */
const SOURCE_SEPARATOR = '; ';

/** What labels stored before they were flat wrapped their sources in (unwrapped when read back). */
const LEGACY_WRAPPER = /^(?:earlier in this conversation: )?(?:a memory written )?after untrusted content \((.*)\)$/s;
const LEGACY_PREFIX = /^(?:earlier in this conversation: )+/;

/** One stored label's sources, flat: a label written before labels were flat nested its sources. */
function sourcesOf(label: string): string[] {
  const text = label.trim().replace(LEGACY_PREFIX, '');
  const wrapped = LEGACY_WRAPPER.exec(text);
  const inner = wrapped ? splitTopLevel(wrapped[1]!) : splitTopLevel(text);
  if (wrapped || inner.length > 1) return inner.flatMap(sourcesOf);
  return text === '' ? [] : [text];
}

/** Splits at separators outside parentheses (a source may hold "; " inside its own parentheses). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (depth === 0 && text.startsWith(SOURCE_SEPARATOR, i)) {
      parts.push(text.slice(start, i));
      start = i + SOURCE_SEPARATOR.length;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/** The sources behind labels, flat and de-duplicated in order: never a label inside a label. */
export function flatSources(labels: readonly string[]): string[] {
  return [...new Set(labels.flatMap(sourcesOf))];
}

/** A label as history entries and memories keep it: its sources, flat ("a page from x; a file outside the trusted roots"). */
export function flatLabel(sources: readonly string[]): string {
  return flatSources(sources).join(SOURCE_SEPARATOR);
}

/** One line for an approval request or a refusal: "after untrusted content (a message from x@y; a page from z)". */
export function describeTaint(labels: readonly string[]): string {
  const sources = flatSources(labels);
  const shown = sources.slice(0, MAX_SOURCES).join(SOURCE_SEPARATOR);
  const more = sources.length > MAX_SOURCES ? ` and ${sources.length - MAX_SOURCES} more` : '';
  return `after untrusted content (${shown}${more})`;
}

/**
 * Parses `AIVYX_TAINT_POLICY`: `tool=action` pairs separated by commas, e.g.
 * `net.post=deny,memory.write=allow`. Unknown tools and actions are refused (a typo must not
 * silently leave the default in force); reads cannot be listed (taint never governs them).
 */
export function parseTaintPolicy(raw: string, catalog: readonly ToolDefinition[]): TaintPolicy {
  const policy: Record<string, TaintAction> = {};
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [tool, action, ...rest] = part.split('=').map((s) => s.trim());
    const def = catalog.find((t) => t.id === tool);
    const hint = 'write tool=gate|deny|allow pairs separated by commas, e.g. net.post=deny,memory.write=allow';
    if (!tool || action === undefined || rest.length > 0)
      throw new AivyxError('Config', `AIVYX_TAINT_POLICY: "${part}" is not tool=action`, { hint });
    if (!def) throw new AivyxError('Config', `AIVYX_TAINT_POLICY: no tool named "${tool}"`, { hint });
    if (!taintGoverns(def))
      throw new AivyxError('Config', `AIVYX_TAINT_POLICY: ${tool} is a read; taint never stops reads`, {
        hint: 'list effect or egress tools only',
      });
    if (!ACTIONS.includes(action as TaintAction))
      throw new AivyxError('Config', `AIVYX_TAINT_POLICY: "${action}" is not an action for ${tool}`, { hint });
    policy[tool] = action as TaintAction;
  }
  return Object.freeze(policy);
}
