/**
 * The starter tools as the core knows them: input validation, model-facing schemas and the
 * scope each call needs. Pure and deterministic (workflow-safe): the workflow checks these
 * scopes before it schedules anything; the activity re-derives them over real paths.
 */
import { AivyxError } from './errors.js';
import type { ToolSpec } from './llm.js';
import { normalizePosixPath } from './path.js';
import type { ToolDescriptor } from './tools.js';

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

/**
 * A bare command name. Anything with `/` (absolute or relative paths), a leading `-`/`.`
 * or shell metacharacters is refused, so the scope qualifier names exactly one PATH entry.
 */
const COMMAND_NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+-]*$/;

function invalid(tool: string, message: string, hint?: string): AivyxError {
  return new AivyxError('InvalidScope', `${tool}: ${message}`, { detail: { tool }, ...(hint === undefined ? {} : { hint }) });
}

function asRecord(tool: string, input: unknown, allowed: readonly string[]): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid(tool, 'input must be a JSON object');
  const rec = input as Record<string, unknown>;
  // Unknown keys are refused: a typo like `pth` must not silently fall back to a default.
  for (const key of Object.keys(rec)) {
    if (!allowed.includes(key)) throw invalid(tool, `unknown input field "${key}"`, `allowed fields: ${allowed.join(', ')}`);
  }
  return rec;
}

function absolutePath(tool: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalid(tool, `"${field}" must be a non-empty string`);
  if (!value.startsWith('/')) throw invalid(tool, `"${field}" must be an absolute path, got "${value}"`, 'give the full path, starting with /');
  try {
    return normalizePosixPath(value);
  } catch (cause) {
    if (cause instanceof AivyxError) throw new AivyxError(cause.kind, `${tool}: ${cause.message}`, { detail: { tool }, ...(cause.hint === undefined ? {} : { hint: cause.hint }), cause });
    throw cause;
  }
}

function positiveInt(tool: string, field: string, value: unknown, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw invalid(tool, `"${field}" must be an integer between 1 and ${max}`);
  }
  return value;
}

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

/** Validates and normalizes a `shell.exec` input; throws AivyxError(InvalidScope). */
export function parseShellExecInput(input: unknown): ShellExecInput {
  const rec = asRecord('shell.exec', input, ['argv', 'cwd', 'timeoutMs']);
  const argv = rec.argv;
  if (!Array.isArray(argv) || argv.length === 0) throw invalid('shell.exec', '"argv" must be a non-empty array of strings', 'pass the command and its arguments as separate strings; there is no shell');
  for (const [i, arg] of argv.entries()) {
    if (typeof arg !== 'string') throw invalid('shell.exec', `argv[${i}] must be a string`);
    if (arg.includes('\0')) throw invalid('shell.exec', `argv[${i}] contains a NUL byte`);
  }
  const command = argv[0] as string;
  if (!COMMAND_NAME.test(command)) {
    throw invalid('shell.exec', `argv[0] must be a bare command name, got "${command}"`, 'name the program (e.g. "ls"), not a path or a shell expression; it is looked up on the worker\'s PATH');
  }
  const out: ShellExecInput = { argv: [...(argv as string[])] };
  if (rec.cwd !== undefined) out.cwd = absolutePath('shell.exec', 'cwd', rec.cwd);
  if (rec.timeoutMs !== undefined) out.timeoutMs = positiveInt('shell.exec', 'timeoutMs', rec.timeoutMs, SHELL_MAX_TIMEOUT_MS);
  return out;
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
  requiredScope: (input) => `shell.exec:${parseShellExecInput(input).argv[0] as string}`,
  idempotency: 'at-most-once',
};

/** Every starter tool, in the order the model is shown them. */
export const TOOL_CATALOG: readonly ToolDescriptor[] = Object.freeze([fsReadTool, fsWriteTool, shellExecTool]);

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
