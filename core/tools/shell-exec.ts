/** `shell.exec`: run one program with literal arguments (no shell), at most once. */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { positiveIntField } from './fields.js';
import { commandScope } from './shell-argv.js';
import { argvField, cwdField } from './shell-spawn.js';

/** Longest `shell.exec` timeout a call may ask for (10 minutes): longer work belongs in a mission. */
export const SHELL_MAX_TIMEOUT_MS = 10 * 60_000;

export const shellExecTool = defineTool({
  id: 'shell.exec',
  description: 'Run a program with literal arguments (no shell: no pipes, quotes or globs). Returns {exitCode, stdout, stderr, timedOut}.',
  input: () =>
    z.strictObject({
      argv: argvField('["ls", "-la", "/tmp"]'),
      cwd: cwdField(),
      timeoutMs: positiveIntField('timeoutMs', SHELL_MAX_TIMEOUT_MS, 'Default 30000.').optional(),
    }),
  // The command and its leading plain words; bare shell.exec when the argv executes its arguments (shell-argv.ts).
  scope: { base: 'shell.exec', of: (i) => commandScope('shell.exec', i.argv) },
  idempotency: 'at-most-once',
  confirmFirst: true,
  // A program's output is whatever the program printed (it may echo anything it read).
  provenance: { output: 'untrusted', effect: true, contentFields: ['timeoutMs'] },
});

/** Validated input of `shell.exec`; `cwd` (when given) is already lexically normalized. */
export type ShellExecInput = ReturnType<typeof shellExecTool.parse>;
export const parseShellExecInput = shellExecTool.parse;
