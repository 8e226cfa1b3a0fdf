/**
 * The command-line tools' shared input rules, and `shell.spawn` as the core knows it (pure,
 * workflow-safe). `shell.exec` (core/tool-catalog.ts) and `shell.spawn` validate argv and cwd with
 * the fields here ({@link argvField}, {@link cwdField}): argv only (no shell), argv[0] a bare command
 * name (no path, no leading `-`/`.`, no shell metacharacters) so the scope names exactly one PATH
 * entry, no NUL bytes, an absolute lexically normalized cwd. The scope itself is the argv's command
 * scope (shell-argv.ts).
 *
 * `shell.spawn` has its own scope base in the seed's taxonomy (D4: `shell.spawn`, command
 * allowlist, "spawn long-lived subprocess"; D5: Trusted ✓ audited, SemiTrusted and Untrusted ⊘),
 * so a grant of `shell.exec:sleep` does not let the agent keep `sleep` running for minutes.
 */
import { z } from 'zod';
import { commandScope } from './shell-argv.js';
import { defineTool } from './define-tool.js';
import { absolutePathField, positiveIntField, says } from './fields.js';

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
 * The argv every command tool takes: literal strings, no NUL bytes, argv[0] a bare command name.
 * Its refusals are worded once here, for shell.exec and shell.spawn alike.
 */
export function argvField(example: string) {
  const notArgv = says(
    '"argv" must be a non-empty array of strings',
    'pass the command and its arguments as separate strings; there is no shell',
  );
  return z
    .array(z.string({ error: notArgv }), { error: notArgv })
    .min(1, { error: notArgv })
    .superRefine((argv, ctx) => {
      const nul = argv.findIndex((a) => a.includes('\0'));
      if (nul >= 0) ctx.addIssue({ code: 'custom', message: says(`argv[${nul}] contains a NUL byte`) });
      else if (!COMMAND_NAME.test(argv[0]!)) {
        ctx.addIssue({
          code: 'custom',
          message: says(
            `argv[0] must be a bare command name, got "${argv[0]!}"`,
            'name the program (e.g. "ls"), not a path or a shell expression; it is looked up on the worker\'s PATH',
          ),
        });
      }
    })
    .describe(`Command name followed by its arguments, e.g. ${example}.`);
}

/** The working directory every command tool takes. */
export const cwdField = () => absolutePathField('cwd', 'Absolute working directory.').optional();

/**
 * Hard limit of one `shell.spawn` (25 minutes): the `runTool` activity's start-to-close timeout is
 * 30 minutes, and the process must be stopped by the tool (group killed, result returned) before
 * Temporal gives up on the activity. Longer work belongs in a mission.
 */
export const SPAWN_MAX_DURATION_MS = 25 * 60_000;
/** Run time of a `shell.spawn` that names none: 5 minutes. */
export const SPAWN_DEFAULT_DURATION_MS = 5 * 60_000;

/** `shell.spawn`: run one long-lived program (no shell) until it exits, at most once. */
export const shellSpawnTool = defineTool({
  id: 'shell.spawn',
  summary: 'Run a long-lived program until it exits or its time is up',
  description:
    'Run a long-lived program with literal arguments (no shell) until it exits or maxDurationMs passes, then return {pid, exitCode, signal, durationMs, stdout, stderr, stdoutBytes, stderrBytes, truncated, timedOut}. Output keeps the head and tail of each stream. Not re-run if interrupted.',
  input: () =>
    z.strictObject({
      argv: argvField('["npm", "test"]'),
      cwd: cwdField(),
      maxDurationMs: positiveIntField(
        'maxDurationMs',
        SPAWN_MAX_DURATION_MS,
        'Terminate the process (SIGTERM, then SIGKILL) after this long.',
      ).optional(),
    }),
  scope: { base: 'shell.spawn', of: (i) => commandScope('shell.spawn', i.argv) },
  idempotency: 'at-most-once',
  // A running process can be stopped: the workflow waits for the activity to report its cancellation.
  interruptible: true,
  confirmFirst: true,
  provenance: { output: 'untrusted', effect: true, contentFields: ['maxDurationMs'] },
});

/** Validated input of `shell.spawn`. */
export type ShellSpawnInput = ReturnType<typeof shellSpawnTool.parse>;
export const parseShellSpawnInput = shellSpawnTool.parse;
