/**
 * The catalog tools (starter and memory) as the core knows them: input validation, model-facing schemas and the
 * scope each call needs. Pure and deterministic (workflow-safe): the workflow checks these
 * scopes before it schedules anything; the activity re-derives them over real paths.
 */
import { AivyxError } from './errors.js';
import { absolutePath, asRecord, invalid, positiveInt } from './tools/tool-input.js';
import { parseCommandInput, SHELL_SPAWN_TOOLS } from './tools/shell-spawn.js';
import { commandScope } from './tools/shell-argv.js';
import { CHANNEL_TOOLS } from './tools/channel-send.js';
import type { ToolSpec } from './llm.js';
import type { ToolDescriptor } from './tools.js';
import { FS_EXTRA_TOOLS } from './tools/fs-extra-tools.js';
import { NET_TOOLS } from './tools/net-tools.js';
import { AUDIT_TOOLS, CONFIG_TOOLS } from './tools/config-tools.js';
import { GIT_TOOLS } from './tools/git-tools.js';
import { MCP_TOOLS } from './tools/mcp-tools.js';

/** Validated input of `fs.read`; `path` is already lexically normalized. */
export interface FsReadInput {
  path: string;
  maxBytes?: number;
}

/** Validated input of `fs.write`; `path` is already lexically normalized. */
export interface FsWriteInput {
  path: string;
  content: string;
  mode: 'overwrite' | 'create';
}

/** Validated input of `shell.exec`; `cwd` (when given) is already lexically normalized. */
export interface ShellExecInput {
  argv: string[];
  cwd?: string;
  timeoutMs?: number;
}

/** Longest `shell.exec` timeout a call may ask for (10 minutes): longer work belongs in a mission. */
export const SHELL_MAX_TIMEOUT_MS = 10 * 60_000;

/** Validates and normalizes an `fs.read` input; throws AivyxError(InvalidScope). */
export function parseFsReadInput(input: unknown): FsReadInput {
  const rec = asRecord('fs.read', input, ['path', 'maxBytes']);
  const out: FsReadInput = { path: absolutePath('fs.read', 'path', rec.path) };
  if (rec.maxBytes !== undefined) out.maxBytes = positiveInt('fs.read', 'maxBytes', rec.maxBytes, Number.MAX_SAFE_INTEGER);
  return out;
}

/** Validates and normalizes an `fs.write` input; throws AivyxError(InvalidScope). */
export function parseFsWriteInput(input: unknown): FsWriteInput {
  const rec = asRecord('fs.write', input, ['path', 'content', 'mode']);
  const path = absolutePath('fs.write', 'path', rec.path);
  if (path === '/') throw invalid('fs.write', 'cannot write to "/"');
  if (typeof rec.content !== 'string') throw invalid('fs.write', '"content" must be a string');
  const mode = rec.mode ?? 'overwrite';
  if (mode !== 'overwrite' && mode !== 'create') throw invalid('fs.write', '"mode" must be "overwrite" or "create"');
  return { path, content: rec.content, mode };
}

/** Validates and normalizes a `shell.exec` input (argv/cwd rules shared with shell.spawn); throws AivyxError(InvalidScope). */
export function parseShellExecInput(input: unknown): ShellExecInput {
  return parseCommandInput('shell.exec', input, { timeoutMs: SHELL_MAX_TIMEOUT_MS });
}

/** `fs.read`: read a UTF-8 text file (up to a byte cap). */
export const fsReadTool: ToolDescriptor = {
  id: 'fs.read',
  description: 'Read a UTF-8 text file. Returns {path, content, bytes, truncated}; content is cut at maxBytes (default and ceiling 1 MiB).',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Absolute path of the file.' },
      maxBytes: { type: 'integer', minimum: 1, description: 'Read at most this many bytes.' },
    },
    required: ['path'],
    additionalProperties: false,
  },
  requiredScope: (input) => `fs.read:${parseFsReadInput(input).path}`,
  idempotency: 'natural',
};

/** `fs.write`: atomically replace (or create) a file with the given text. */
export const fsWriteTool: ToolDescriptor = {
  id: 'fs.write',
  description: 'Write text to a file atomically (temp file + rename) and verify it by reading it back. mode "create" refuses to replace a file with different content.',
  inputSchema: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Absolute path of the file.' },
      content: { type: 'string', description: 'The complete new content (UTF-8).' },
      mode: { type: 'string', enum: ['overwrite', 'create'], default: 'overwrite' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  requiredScope: (input) => `fs.write:${parseFsWriteInput(input).path}`,
  // Same content twice is the same effect; 'create' accepts identical existing content.
  idempotency: 'natural',
};

/** `shell.exec`: run one program with literal arguments (no shell), at most once. */
export const shellExecTool: ToolDescriptor = {
  id: 'shell.exec',
  description: 'Run a program with literal arguments (no shell: quotes, pipes, $() and globs are not interpreted). Returns {exitCode, signal, stdout, stderr, truncated, timedOut}. Not re-run if interrupted.',
  inputSchema: {
    type: 'object',
    properties: {
      argv: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Command name followed by its arguments, e.g. ["ls", "-la", "/tmp"].' },
      cwd: { type: 'string', description: 'Absolute working directory.' },
      timeoutMs: { type: 'integer', minimum: 1, maximum: SHELL_MAX_TIMEOUT_MS, default: 30_000 },
    },
    required: ['argv'],
    additionalProperties: false,
  },
  // The command and its leading plain words; bare shell.exec when the argv executes its arguments (core/tools/shell-argv.ts).
  requiredScope: (input) => commandScope('shell.exec', parseShellExecInput(input).argv),
  idempotency: 'at-most-once',
};

// ---------------------------------------------------------------- memory (docs/MEMORY.md)

/**
 * Where a memory entry lives, or what a recall/forget is filtered to. The scope qualifier of a
 * call is derived from it (see {@link memoryQualifier}); `public` entries form their own space.
 */
export interface MemoryFilter {
  session?: string;
  /** Lower-cased. */
  topic?: string;
  public?: boolean;
}

/** Validated input of `memory.write`. */
export interface MemoryWriteInput extends MemoryFilter {
  text: string;
}

/** Validated input of `memory.recall`; `from` (inclusive) and `to` (exclusive) are epoch ms. */
export interface MemoryRecallInput extends MemoryFilter {
  query?: string;
  from?: number;
  to?: number;
  limit: number;
}

/** Validated input of `memory.forget`: one entry by `id`, or every entry matching the filter and range. */
export interface MemoryForgetInput extends MemoryFilter {
  id?: string;
  from?: number;
  to?: number;
}

/** Longest entry a write accepts (characters): memory holds notes, not documents. */
export const MEMORY_MAX_TEXT = 8000;
/** Most entries one recall returns. */
export const MEMORY_MAX_LIMIT = 50;
/** Entries a recall returns when it does not say. */
export const MEMORY_DEFAULT_LIMIT = 10;

// No '*', '?' or ':' in names: a name must never turn the needed scope into a glob or forge
// the `session:<s>:topic:<t>` shape (a session called "a:topic:b").
const MEMORY_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const MEMORY_ID = /^m_[0-9a-f]{32}$/;
// Date.parse also reads loose forms ("Dec 1"); only ISO-8601 dates/instants are accepted.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function memoryName(tool: string, field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !MEMORY_NAME.test(value)) throw invalid(tool, `"${field}" must be 1-128 letters, digits, ".", "_" or "-"`, 'no spaces, ":" or wildcards');
  return value;
}

function instant(tool: string, field: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && ISO_INSTANT.test(value)) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return ms;
  }
  throw invalid(tool, `"${field}" must be epoch milliseconds or an ISO-8601 time`, 'e.g. 2026-12-01T00:00:00Z or 1796083200000');
}

function memoryFilter(tool: string, rec: Record<string, unknown>): MemoryFilter {
  const out: MemoryFilter = {};
  const session = memoryName(tool, 'session', rec.session);
  const topic = memoryName(tool, 'topic', rec.topic);
  if (rec.public !== undefined && typeof rec.public !== 'boolean') throw invalid(tool, '"public" must be true or false');
  if (session !== undefined) out.session = session;
  if (topic !== undefined) out.topic = topic.toLowerCase();
  if (rec.public === true) {
    // Public entries have no session: a public grant must not reach into anyone's session.
    if (session !== undefined) throw invalid(tool, 'public entries have no session', 'drop "session" or "public"');
    out.public = true;
  }
  return out;
}

function range(tool: string, rec: Record<string, unknown>): { from?: number; to?: number } {
  const from = instant(tool, 'from', rec.from);
  const to = instant(tool, 'to', rec.to);
  if (from !== undefined && to !== undefined && from >= to) throw invalid(tool, '"from" must be before "to"', '"to" is exclusive');
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/**
 * The scope qualifier of a memory place or filter, most specific partition first:
 * `scope:public:<topic>` (`scope:public:*` for every public topic), `session:<s>:topic:<t>`,
 * `session:<s>`, `topic:<t>`, or undefined (the bare scope: all of memory). Public wins because
 * that is exactly what the Untrusted ceiling (`memory.read:scope:public:*`) can be granted.
 */
export function memoryQualifier(f: MemoryFilter): string | undefined {
  if (f.public) return `scope:public:${f.topic ?? '*'}`;
  if (f.session !== undefined && f.topic !== undefined) return `session:${f.session}:topic:${f.topic}`;
  if (f.session !== undefined) return `session:${f.session}`;
  if (f.topic !== undefined) return `topic:${f.topic}`;
  return undefined;
}

function memoryScope(base: string, f: MemoryFilter): string {
  const q = memoryQualifier(f);
  return q === undefined ? base : `${base}:${q}`;
}

/** Validates a `memory.write` input; throws AivyxError(InvalidScope). */
export function parseMemoryWriteInput(input: unknown): MemoryWriteInput {
  const rec = asRecord('memory.write', input, ['text', 'session', 'topic', 'public']);
  if (typeof rec.text !== 'string' || rec.text.trim() === '') throw invalid('memory.write', '"text" must be a non-empty string');
  if (rec.text.length > MEMORY_MAX_TEXT) throw invalid('memory.write', `"text" is longer than ${MEMORY_MAX_TEXT} characters`, 'store a summary, or split it into several entries');
  const filter = memoryFilter('memory.write', rec);
  if (filter.public && filter.topic === undefined) throw invalid('memory.write', 'a public entry needs a "topic"', 'public entries are filed under scope:public:<topic>');
  return { text: rec.text, ...filter };
}

/** Validates a `memory.recall` input; throws AivyxError(InvalidScope). */
export function parseMemoryRecallInput(input: unknown): MemoryRecallInput {
  const rec = asRecord('memory.recall', input, ['query', 'session', 'topic', 'public', 'from', 'to', 'limit']);
  if (rec.query !== undefined && (typeof rec.query !== 'string' || rec.query.length > 1000)) throw invalid('memory.recall', '"query" must be a string of at most 1000 characters');
  const out: MemoryRecallInput = { ...memoryFilter('memory.recall', rec), ...range('memory.recall', rec), limit: MEMORY_DEFAULT_LIMIT };
  if (typeof rec.query === 'string' && rec.query.trim() !== '') out.query = rec.query;
  if (rec.limit !== undefined) out.limit = positiveInt('memory.recall', 'limit', rec.limit, MEMORY_MAX_LIMIT);
  return out;
}

/** Validates a `memory.forget` input; throws AivyxError(InvalidScope). */
export function parseMemoryForgetInput(input: unknown): MemoryForgetInput {
  const rec = asRecord('memory.forget', input, ['id', 'session', 'topic', 'public', 'from', 'to']);
  if (rec.id !== undefined && (typeof rec.id !== 'string' || !MEMORY_ID.test(rec.id))) throw invalid('memory.forget', '"id" must be a memory id (m_ and 32 hex digits)', 'use an id returned by memory.write or memory.recall');
  const out: MemoryForgetInput = { ...memoryFilter('memory.forget', rec), ...range('memory.forget', rec) };
  if (typeof rec.id === 'string') out.id = rec.id;
  // An empty forget would silently mean "everything": it has to be asked for with a filter or a range.
  if (Object.keys(out).length === 0) throw invalid('memory.forget', 'give an "id", a filter (session, topic, public) or a time range', 'forgetting everything is not a single call');
  return out;
}

const MEMORY_FILTER_PROPS = {
  session: { type: 'string', description: 'Session id (letters, digits, . _ -).' },
  topic: { type: 'string', description: 'Topic tag (case-insensitive).' },
  public: { type: 'boolean', description: 'Public entries only (filed under a topic, never a session).' },
};
const MEMORY_RANGE_PROPS = {
  from: { type: ['integer', 'string'], description: 'Start of the time range, inclusive: epoch ms or ISO-8601.' },
  to: { type: ['integer', 'string'], description: 'End of the time range, exclusive: epoch ms or ISO-8601.' },
};

/** `memory.write`: store one note; a retried call stores it once. */
export const memoryWriteTool: ToolDescriptor = {
  id: 'memory.write',
  description: 'Remember a note for later recall. Optional session/topic tags; public:true (needs a topic) makes it readable from untrusted channels. Returns {id, at}.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', maxLength: MEMORY_MAX_TEXT, description: 'What to remember.' }, ...MEMORY_FILTER_PROPS },
    required: ['text'],
    additionalProperties: false,
  },
  requiredScope: (input) => memoryScope('memory.write', parseMemoryWriteInput(input)),
  idempotency: 'keyed',
};

/** `memory.recall`: find notes by words, tags and time range, best match then newest first. */
export const memoryRecallTool: ToolDescriptor = {
  id: 'memory.recall',
  description: 'Recall remembered notes. With a query, notes sharing its words rank first, newest first among equals; without, the newest notes in the range. Returns {entries: [{id, at, text, session?, topic?, public?}], more}.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'Words to look for (optional).' },
      ...MEMORY_FILTER_PROPS,
      ...MEMORY_RANGE_PROPS,
      limit: { type: 'integer', minimum: 1, maximum: MEMORY_MAX_LIMIT, default: MEMORY_DEFAULT_LIMIT },
    },
    additionalProperties: false,
  },
  requiredScope: (input) => memoryScope('memory.read', parseMemoryRecallInput(input)),
  idempotency: 'natural',
};

/** `memory.forget`: delete one note by id, or every note matching a filter and range. */
export const memoryForgetTool: ToolDescriptor = {
  id: 'memory.forget',
  description: 'Forget notes: one by id, or all matching session/topic/public and a time range. With an id and a filter, the note is forgotten only if it matches the filter. Returns {forgotten}.',
  inputSchema: {
    type: 'object',
    properties: { id: { type: 'string', description: 'A memory id (m_…).' }, ...MEMORY_FILTER_PROPS, ...MEMORY_RANGE_PROPS },
    additionalProperties: false,
  },
  requiredScope: (input) => memoryScope('memory.forget', parseMemoryForgetInput(input)),
  // Deleting what is already gone changes nothing.
  idempotency: 'natural',
};

/** Every catalog tool (starter tools, then memory), in the order the model is shown them. */
export const TOOL_CATALOG: readonly ToolDescriptor[] = Object.freeze([fsReadTool, fsWriteTool, shellExecTool, memoryWriteTool, memoryRecallTool, memoryForgetTool, ...FS_EXTRA_TOOLS, ...NET_TOOLS, ...GIT_TOOLS, ...CONFIG_TOOLS, ...AUDIT_TOOLS, ...MCP_TOOLS, ...SHELL_SPAWN_TOOLS, ...CHANNEL_TOOLS]);

/** The catalog descriptor with this id, or undefined. */
export function findTool(id: string): ToolDescriptor | undefined {
  return TOOL_CATALOG.find((t) => t.id === id);
}

/** Model-facing specs for `ids` (default: the whole catalog); an unknown id throws AivyxError(NotFound). */
export function toolSpecs(ids?: readonly string[]): ToolSpec[] {
  const chosen = ids === undefined ? TOOL_CATALOG : ids.map((id) => {
    const tool = findTool(id);
    if (!tool) throw new AivyxError('NotFound', `unknown tool "${id}"`, { detail: { tool: id }, hint: `known tools: ${TOOL_CATALOG.map((t) => t.id).join(', ')}` });
    return tool;
  });
  return chosen.map((t) => ({ id: t.id, description: t.description, inputSchema: t.inputSchema }));
}
