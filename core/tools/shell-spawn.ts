/**
 * The command-line tools' shared input rules, and `shell.spawn` as the core knows it (pure,
 * workflow-safe). `shell.exec` (core/tool-catalog.ts) and `shell.spawn` validate argv and cwd with
 * the one function here, {@link parseCommandInput}: argv only (no shell), argv[0] a bare command
 * name (no path, no leading `-`/`.`, no shell metacharacters) so the scope names exactly one PATH
 * entry, no NUL bytes, an absolute lexically normalized cwd. The scope itself is the argv's command
 * scope (shell-argv.ts).
 *
 * `shell.spawn` has its own scope base in the seed's taxonomy (D4: `shell.spawn`, command
 * allowlist, "spawn long-lived subprocess"; D5: Trusted ✓ audited, SemiTrusted and Untrusted ⊘),
 * so a grant of `shell.exec:sleep` does not let the agent keep `sleep` running for minutes.
 */
import { absolutePath, asRecord, invalid, positiveInt } from './tool-input.js';
import { commandScope } from './shell-argv.js';
import type { ToolDescriptor } from '../tools.js';

/**
 * A bare command name. Anything with `/` (absolute or relative paths), a leading `-`/`.`
 * or shell metacharacters is refused, so the scope qualifier names exactly one PATH entry.
 */
export const COMMAND_NAME = /^[A-Za-z0-9_+][A-Za-z0-9._+-]*$/;

/** The argv and cwd every command tool takes; `cwd` (when given) is lexically normalized. */
export interface CommandInput {
  argv: string[];
  cwd?: string;
}

/**
 * Validates a command tool's input: `argv` and `cwd` as above, plus the tool's own integer
 * fields (each 1..max). Unknown fields are refused. Throws AivyxError(InvalidScope) naming `tool`.
 */
export function parseCommandInput<K extends string>(tool: string, input: unknown, limits: Readonly<Record<K, number>>): CommandInput & Partial<Record<K, number>> {
  const extra = Object.keys(limits) as K[];
  const rec = asRecord(tool, input, ['argv', 'cwd', ...extra]);
  const argv = rec.argv;
  if (!Array.isArray(argv) || argv.length === 0) throw invalid(tool, '"argv" must be a non-empty array of strings', 'pass the command and its arguments as separate strings; there is no shell');
  for (const [i, arg] of argv.entries()) {
    if (typeof arg !== 'string') throw invalid(tool, `argv[${i}] must be a string`);
    if (arg.includes('\0')) throw invalid(tool, `argv[${i}] contains a NUL byte`);
  }
  const command = argv[0] as string;
  if (!COMMAND_NAME.test(command)) {
    throw invalid(tool, `argv[0] must be a bare command name, got "${command}"`, 'name the program (e.g. "ls"), not a path or a shell expression; it is looked up on the worker\'s PATH');
  }
  const out = { argv: [...(argv as string[])] } as CommandInput & Partial<Record<K, number>>;
  if (rec.cwd !== undefined) out.cwd = absolutePath(tool, 'cwd', rec.cwd);
  for (const field of extra) {
    const value = rec[field];
    if (value !== undefined) (out as Partial<Record<K, number>>)[field] = positiveInt(tool, field, value, limits[field]);
  }
  return out;
}

/** Validated input of `shell.spawn`. */
export interface ShellSpawnInput extends CommandInput {
  /** How long the process may run before it is terminated (ms); default {@link SPAWN_DEFAULT_DURATION_MS}. */
  maxDurationMs?: number;
}

/**
 * Hard limit of one `shell.spawn` (25 minutes): the `runTool` activity's start-to-close timeout is
 * 30 minutes, and the process must be stopped by the tool (group killed, result returned) before
 * Temporal gives up on the activity. Longer work belongs in a mission.
 */
export const SPAWN_MAX_DURATION_MS = 25 * 60_000;
/** Run time of a `shell.spawn` that names none: 5 minutes. */
export const SPAWN_DEFAULT_DURATION_MS = 5 * 60_000;

/** Validates and normalizes a `shell.spawn` input; throws AivyxError(InvalidScope). */
export function parseShellSpawnInput(input: unknown): ShellSpawnInput {
  return parseCommandInput('shell.spawn', input, { maxDurationMs: SPAWN_MAX_DURATION_MS });
}

/** `shell.spawn`: run one long-lived program (no shell) until it exits, at most once. */
export const shellSpawnTool: ToolDescriptor = {
  id: 'shell.spawn',
  description:
    'Run a long-lived program with literal arguments (no shell) until it exits or maxDurationMs passes, then return {pid, exitCode, signal, durationMs, stdout, stderr, stdoutBytes, stderrBytes, truncated, timedOut}. Output keeps the head and tail of each stream. Not re-run if interrupted.',
  inputSchema: {
    type: 'object',
    properties: {
      argv: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Command name followed by its arguments, e.g. ["npm", "test"].' },
      cwd: { type: 'string', description: 'Absolute working directory.' },
      maxDurationMs: { type: 'integer', minimum: 1, maximum: SPAWN_MAX_DURATION_MS, default: SPAWN_DEFAULT_DURATION_MS, description: 'Terminate the process (SIGTERM, then SIGKILL) after this long.' },
    },
    required: ['argv'],
    additionalProperties: false,
  },
  requiredScope: (input) => commandScope('shell.spawn', parseShellSpawnInput(input).argv),
  idempotency: 'at-most-once',
};

/** The shell.spawn tool list (appended to the catalog). */
export const SHELL_SPAWN_TOOLS: readonly ToolDescriptor[] = Object.freeze([shellSpawnTool]);

/** Command tools that should be confirm-first by default (add to AIVYX_CONFIRM_FIRST). */
export const SHELL_CONFIRM_FIRST: readonly string[] = Object.freeze(['shell.exec', 'shell.spawn']);
