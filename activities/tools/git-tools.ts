/**
 * git.status, git.diff and git.commit: git run with argv only (through shell.exec's spawner:
 * no shell, scrubbed env, output caps, timeout), hardened so that a repository cannot make git
 * execute anything. A repository's own config is attacker-controlled content, so:
 * - `GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=/dev/null`: no system/global config;
 * - `-c core.hooksPath=/dev/null -c core.fsmonitor=false -c core.pager=cat --no-pager
 *   -c commit.gpgSign=false -c gc.auto=0 -c maintenance.auto=false`: our `-c` wins over the repo's;
 * - `--no-ext-diff --no-textconv --ignore-submodules=all --literal-pathspecs`;
 * - keys we cannot neutralize with `-c` (filter drivers, includes, diff drivers) make the call
 *   fail with CapabilityDenied: running them would be execution (shell.exec), not git.read.
 * Caller input never becomes an option: paths follow `--`, the message is one `--message=` value.
 */
import { createHash } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import { AivyxError } from '../../core/errors.js';
import { normalizePosixPath } from '../../core/path.js';
import { gitCommitTool, gitDiffTool, gitStatusTool, parseGitCommitInput, parseGitDiffInput, parseGitStatusInput, type GitCommitInput } from '../../core/tools/git-tools.js';
import { recordIntentEnd, type IntentStore } from './intent-store.js';
import { execute, SHELL_ENV_ALLOWLIST, type ShellExecOutput } from './shell-exec.js';
import type { ToolImplementation, ToolRunContext } from './tool-implementation.js';

/** Timeout of one git invocation. */
export const GIT_TIMEOUT_MS = 30_000;

/** Config every git invocation gets on its command line (it overrides the repository's own). */
export const GIT_HARDENING: readonly string[] = Object.freeze([
  '--no-pager',
  '--literal-pathspecs',
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.pager=cat',
  '-c', 'core.editor=false',
  '-c', 'core.sshCommand=false',
  '-c', 'diff.external=',
  '-c', 'commit.gpgSign=false',
  '-c', 'gc.auto=0',
  '-c', 'maintenance.auto=false',
  '-c', 'status.submoduleSummary=false',
  '-c', 'credential.helper=',
]);

/** Repository config keys that would run a program and that `-c` cannot switch off: refused. */
const EXECUTING_KEYS: readonly RegExp[] = [/^filter\./i, /^include\./i, /^includeif\./i, /^diff\.[^.]+\.(command|textconv)$/i];

/** Ports and settings of the git tools. */
export interface GitToolDeps {
  intents: IntentStore;
  /** Where PATH/HOME/LANG are taken from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

function toolError(tool: string, message: string, options: { hint?: string; cause?: unknown; detail?: Record<string, unknown> } = {}): AivyxError {
  const { detail, ...rest } = options;
  return new AivyxError('Tool', `${tool}: ${message}`, { detail: { tool, ...detail }, ...rest });
}

function gitEnv(source: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of SHELL_ENV_ALLOWLIST) {
    const v = source[name];
    if (v !== undefined) env[name] = v;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  Object.assign(env, {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'false',
    GIT_ATTR_NOSYSTEM: '1',
  });
  return env;
}

function quietCtx(): ToolRunContext {
  return { signal: new AbortController().signal, heartbeat: () => undefined, idemKey: 'git/resolve', turnId: 'git/resolve', held: [], recordMemoryAccess: async () => undefined };
}

/** Creates the git tools; `intents` keys git.commit's at-most-once claim. */
export function createGitTools(deps: GitToolDeps): ToolImplementation[] {
  const env = gitEnv(deps.env ?? process.env);

  async function git(tool: string, cwd: string, args: readonly string[], ctx: ToolRunContext): Promise<ShellExecOutput> {
    const out = await execute({ argv: ['git', ...GIT_HARDENING, ...args], timeoutMs: GIT_TIMEOUT_MS }, cwd, env, ctx);
    if (out.timedOut) throw toolError(tool, `git ${args[0]} timed out`);
    return out;
  }

  async function gitOk(tool: string, cwd: string, args: readonly string[], ctx: ToolRunContext): Promise<string> {
    const out = await git(tool, cwd, args, ctx);
    if (out.exitCode !== 0) throw toolError(tool, `git ${args[0]} failed (exit ${String(out.exitCode)}): ${out.stderr.trim().slice(0, 500)}`);
    return out.stdout;
  }

  /** realpath + `rev-parse --show-toplevel`, then the repository's config is vetted. */
  async function toplevel(tool: string, repo: string, ctx: ToolRunContext): Promise<string> {
    let real: string;
    try {
      real = await realpath(repo);
    } catch (cause) {
      throw toolError(tool, `repository ${repo} does not exist`, { cause });
    }
    if (!(await stat(real)).isDirectory()) throw toolError(tool, `${repo} is not a directory`);
    const out = await git(tool, real, ['rev-parse', '--show-toplevel'], ctx);
    if (out.exitCode !== 0) throw toolError(tool, `${repo} is not inside a git work tree`, { hint: out.stderr.trim().slice(0, 300) });
    const top = normalizePosixPath(await realpath(out.stdout.trim()));
    const keys = await git(tool, top, ['config', '--no-includes', '--list', '--name-only'], ctx);
    for (const key of keys.stdout.split('\n').filter(Boolean)) {
      if (EXECUTING_KEYS.some((re) => re.test(key))) {
        throw new AivyxError('CapabilityDenied', `${tool}: the repository config sets "${key}", which would make git run a program or leave the repository`, {
          hint: 'git tools never execute repository-supplied programs; remove the key, or use shell.exec (an execution grant) deliberately',
          detail: { tool, key, repo: top },
        });
      }
    }
    return top;
  }

  const status: ToolImplementation = {
    descriptor: gitStatusTool,
    resolveScope: async (input) => `git.read:${await toplevel('git.status', parseGitStatusInput(input).repo, quietCtx())}`,
    async run(input, ctx) {
      const top = await toplevel('git.status', parseGitStatusInput(input).repo, ctx);
      const res = await git('git.status', top, ['status', '--porcelain=v1', '--branch', '--untracked-files=all', '--ignore-submodules=all'], ctx);
      if (res.exitCode !== 0) throw toolError('git.status', `git status failed (exit ${String(res.exitCode)}): ${res.stderr.trim().slice(0, 500)}`);
      const out = res.stdout;
      let branch: string | null = null;
      const entries: { status: string; path: string }[] = [];
      for (const line of out.split('\n').filter(Boolean)) {
        if (line.startsWith('## ')) branch = line.slice(3);
        else entries.push({ status: line.slice(0, 2), path: line.slice(3) });
      }
      return { kind: 'completed', output: { repo: top, branch, entries, truncated: res.truncated }, verified: 'NotApplicable' };
    },
  };

  const diff: ToolImplementation = {
    descriptor: gitDiffTool,
    resolveScope: async (input) => `git.read:${await toplevel('git.diff', parseGitDiffInput(input).repo, quietCtx())}`,
    async run(input, ctx) {
      const req = parseGitDiffInput(input);
      const top = await toplevel('git.diff', req.repo, ctx);
      const args = ['diff', '--no-ext-diff', '--no-textconv', '--no-color', '--ignore-submodules=all', ...(req.staged ? ['--cached'] : []), '--', ...(req.paths ?? [])];
      const out = await git('git.diff', top, args, ctx);
      if (out.exitCode !== 0) throw toolError('git.diff', `git diff failed (exit ${String(out.exitCode)}): ${out.stderr.trim().slice(0, 500)}`);
      return { kind: 'completed', output: { repo: top, diff: out.stdout, truncated: out.truncated }, verified: 'NotApplicable' };
    },
  };

  const commit: ToolImplementation = {
    descriptor: gitCommitTool,
    resolveScope: async (input) => `git.write:${await toplevel('git.commit', parseGitCommitInput(input).repo, quietCtx())}`,
    async run(input, ctx) {
      const req = parseGitCommitInput(input);
      const top = await toplevel('git.commit', req.repo, ctx);
      const parentOut = await git('git.commit', top, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], ctx);
      const parent = parentOut.exitCode === 0 ? parentOut.stdout.trim() : null;
      ctx.signal.throwIfAborted();

      const claim = await deps.intents.begin(ctx.idemKey, { tool: 'git.commit', inputHash: commitHash(req) });
      if (claim === 'already-started') {
        throw toolError('git.commit', 'was interrupted and is not re-run (at-most-once); check the repository\'s log', { detail: { idemKey: ctx.idemKey, atMostOnce: true }, hint: `inspect git log in ${top}` });
      }
      let summary = 'failed before it ended';
      try {
        if (req.paths) await gitOk('git.commit', top, ['add', '-A', '--', ...req.paths], ctx);
        const args = ['commit', '--no-verify', '--cleanup=verbatim', `--message=${req.message}`, ...(req.paths ? ['--only', '--', ...req.paths] : [])];
        const out = await git('git.commit', top, args, ctx);
        if (out.exitCode !== 0) {
          const text = `${out.stdout}\n${out.stderr}`;
          throw toolError('git.commit', /nothing (added )?to commit|no changes added/i.test(text) ? 'nothing to commit' : `git commit failed (exit ${String(out.exitCode)}): ${out.stderr.trim().slice(0, 500)}`);
        }
        // Verified by reading back: HEAD moved onto the old HEAD, carries our message, and its tree is the index.
        const head = (await gitOk('git.commit', top, ['rev-parse', '--verify', 'HEAD^{commit}'], ctx)).trim();
        const parents = (await gitOk('git.commit', top, ['rev-list', '--parents', '-n', '1', head], ctx)).trim().split(' ').slice(1);
        const body = await gitOk('git.commit', top, ['log', '-1', '--format=%B', head], ctx);
        const tree = (await gitOk('git.commit', top, ['rev-parse', `${head}^{tree}`], ctx)).trim();
        const index = (await gitOk('git.commit', top, ['write-tree'], ctx)).trim();
        const ok = head !== parent && (parent === null ? parents.length === 0 : parents.length === 1 && parents[0] === parent) && body.replace(/\n+$/, '') === req.message.replace(/\n+$/, '') && tree === index;
        summary = `committed ${head.slice(0, 12)}`;
        return { kind: 'completed', output: { repo: top, commit: head, parent }, verified: ok ? 'Verified' : 'Unverified' };
      } catch (e) {
        summary = ctx.signal.aborted ? 'cancelled' : e instanceof AivyxError ? e.message : 'failed';
        throw e;
      } finally {
        await recordIntentEnd(deps.intents, ctx.idemKey, summary);
      }
    },
  };

  return [status, diff, commit];
}

function commitHash(req: GitCommitInput): string {
  return createHash('sha256').update(JSON.stringify({ repo: req.repo, message: req.message, paths: req.paths })).digest('hex');
}
