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
 *
 * Where the repository really lives is checked, not assumed: discovery never climbs above the
 * given directory (`GIT_CEILING_DIRECTORIES`), the work tree, the git directory and the common
 * directory are resolved (`rev-parse`, realpath) — a planted `.git` FILE (`gitdir: /elsewhere`)
 * or `commondir` points them elsewhere — and the scope covers all three; objects borrowed from
 * elsewhere (`objects/info/alternates`) are refused. Later commands are pinned to the checked
 * directories (`GIT_DIR`, `GIT_WORK_TREE`), and the run re-checks each against the turn's grants
 * and the data-directory rule. A data directory inside the work tree is hidden from git.status,
 * and git.diff/git.commit refuse changes under it.
 */
import { toolError } from '../../core/tools/tool-error.js';
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AivyxError } from '../../core/errors.js';
import { normalizePosixPath } from '../../core/path.js';
import { assertReachable, dataDirScope, isProtectedPath, isWithin, NO_PROTECTED_PATHS, type ProtectedPaths } from './confinement.js';
import { gitCommitTool, gitDiffTool, gitStatusTool, type GitCommitInput } from '../../core/tools/git-tools.js';
import { recordIntentEnd, type IntentStore } from './intent-store.js';
import { execute, SHELL_ENV_ALLOWLIST, type ShellExecOutput } from './shell-exec.js';
import { implementTool, type ToolImplementation, type ToolRunContext } from './tool-implementation.js';

/** Timeout of one git invocation. */
export const GIT_TIMEOUT_MS = 30_000;

/** Config every git invocation gets on its command line (it overrides the repository's own). */
export const GIT_HARDENING: readonly string[] = Object.freeze([
  '--no-pager',
  '--literal-pathspecs',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.pager=cat',
  '-c',
  'core.editor=false',
  '-c',
  'core.sshCommand=false',
  '-c',
  'diff.external=',
  '-c',
  'commit.gpgSign=false',
  '-c',
  'gc.auto=0',
  '-c',
  'maintenance.auto=false',
  '-c',
  'status.submoduleSummary=false',
  '-c',
  'credential.helper=',
]);

/** Repository config keys that would run a program and that `-c` cannot switch off: refused. */
const EXECUTING_KEYS: readonly RegExp[] = [/^filter\./i, /^include\./i, /^includeif\./i, /^diff\.[^.]+\.(command|textconv)$/i];

/** Ports and settings of the git tools. */
export interface GitToolDeps {
  intents: IntentStore;
  /** Where PATH/HOME/LANG are taken from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Paths no call may reach (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
}

/** Where a repository really lives: all canonical. */
interface RepoPlace {
  top: string;
  gitDir: string;
  commonDir: string;
}

/** The deepest directory holding every path (the scope that covers a repository spread over several). */
function commonAncestor(dirs: readonly string[]): string {
  const split = dirs.map((d) => (d === '/' ? [] : d.slice(1).split('/')));
  const first = split[0] ?? [];
  let n = 0;
  while (n < first.length && split.every((s) => s[n] === first[n])) n++;
  return '/' + first.slice(0, n).join('/');
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

/** One entry of `git status --porcelain=v1 -z`: its XY status, path and, for a rename or copy, the source. */
interface PorcelainEntry {
  status: string;
  path: string;
  from?: string;
}

/** Parses `git status --porcelain=v1 -z [--branch]` (raw paths, no quoting; a rename's source is the next field). */
function parsePorcelain(out: string): { branch: string | null; entries: PorcelainEntry[] } {
  const parts = out.split('\0');
  let branch: string | null = null;
  const entries: PorcelainEntry[] = [];
  for (let i = 0; i < parts.length; i++) {
    const field = parts[i] as string;
    if (field.startsWith('## ')) branch = field.slice(3);
    else if (field.length >= 4) {
      const from = field[0] === 'R' || field[0] === 'C' ? (parts[++i] ?? '') : undefined;
      entries.push({ status: field.slice(0, 2), path: field.slice(3), ...(from === undefined ? {} : { from }) });
    }
  }
  return { branch, entries };
}

function quietCtx(): ToolRunContext {
  return {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    idemKey: 'git/resolve',
    turnId: 'git/resolve',
    held: [],
    recordMemoryAccess: async () => undefined,
  };
}

/** Creates the git tools; `intents` keys git.commit's at-most-once claim. */
export function createGitTools(deps: GitToolDeps): ToolImplementation[] {
  const env = gitEnv(deps.env ?? process.env);

  const paths = deps.protectedPaths ?? NO_PROTECTED_PATHS;

  /** The repository's place: discovered from `repo` itself only, resolved, its objects not borrowed. */
  async function locate(tool: string, repo: string, ctx: ToolRunContext): Promise<RepoPlace> {
    let real: string;
    try {
      real = await realpath(repo);
    } catch (cause) {
      throw toolError(tool, `repository ${repo} does not exist`, { cause });
    }
    if (!(await stat(real)).isDirectory()) throw toolError(tool, `${repo} is not a directory`);
    // No discovery above the given directory: the repository is the one named, not a parent of it.
    const discover = { ...env, GIT_CEILING_DIRECTORIES: dirname(real) };
    const out = await execute(
      {
        argv: ['git', ...GIT_HARDENING, 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-dir', '--git-common-dir'],
        timeoutMs: GIT_TIMEOUT_MS,
      },
      real,
      discover,
      ctx,
    );
    const [topOut, gitDirOut, commonOut] = out.stdout.split('\n');
    if (out.exitCode !== 0 || !topOut || !gitDirOut || !commonOut) {
      throw toolError(tool, `${repo} is not the top-level directory of a git work tree`, {
        hint: `give the directory that holds .git (${out.stderr.trim().slice(0, 200)})`,
      });
    }
    const canonical = async (p: string): Promise<string> => normalizePosixPath(await realpath(p));
    const place = { top: await canonical(topOut), gitDir: await canonical(gitDirOut), commonDir: await canonical(commonOut) };
    // Borrowed objects would let refs planted here show another repository's content.
    const alternates = await readFile(join(place.commonDir, 'objects', 'info', 'alternates'), 'utf8').catch(() => '');
    if (alternates.trim() !== '') {
      throw new AivyxError('CapabilityDenied', `${tool}: the repository borrows objects from elsewhere (objects/info/alternates)`, {
        hint: 'git tools read only repositories that are whole inside the grant; repack it (git repack -a -d) and remove the alternates file',
        detail: { tool, repo: place.top },
      });
    }
    return place;
  }

  /** The scope a call on `place` needs: the data-directory scope if any part is protected, else the directory covering all parts. */
  function placeScope(base: string, place: RepoPlace): string {
    const parts = [place.top, place.gitDir, place.commonDir];
    const inDataDir = parts.find((p) => isProtectedPath(p, paths));
    return inDataDir === undefined ? `${base}:${commonAncestor(parts)}` : dataDirScope(inDataDir);
  }

  /** Locates the repository, checks every part against the turn's grants, then vets its config; returns the env pinned to it. */
  async function open(
    tool: string,
    base: string,
    repo: string,
    ctx: ToolRunContext,
  ): Promise<{ top: string; pinned: Record<string, string> }> {
    const place = await locate(tool, repo, ctx);
    for (const p of [place.top, place.gitDir, place.commonDir]) assertReachable(tool, base, p, ctx.held, paths);
    const pinned = { ...env, GIT_DIR: place.gitDir, GIT_WORK_TREE: place.top, GIT_CEILING_DIRECTORIES: dirname(place.top) };
    const keys = await execute(
      { argv: ['git', ...GIT_HARDENING, 'config', '--no-includes', '--list', '--name-only'], timeoutMs: GIT_TIMEOUT_MS },
      place.top,
      pinned,
      ctx,
    );
    for (const key of keys.stdout.split('\n').filter(Boolean)) {
      if (EXECUTING_KEYS.some((re) => re.test(key))) {
        throw new AivyxError(
          'CapabilityDenied',
          `${tool}: the repository config sets "${key}", which would make git run a program or leave the repository`,
          {
            hint: 'git tools never execute repository-supplied programs; remove the key, or use shell.exec (an execution grant) deliberately',
            detail: { tool, key, repo: place.top },
          },
        );
      }
    }
    return { top: place.top, pinned };
  }

  async function git(
    tool: string,
    repo: { top: string; pinned: Record<string, string> },
    args: readonly string[],
    ctx: ToolRunContext,
  ): Promise<ShellExecOutput> {
    const out = await execute({ argv: ['git', ...GIT_HARDENING, ...args], timeoutMs: GIT_TIMEOUT_MS }, repo.top, repo.pinned, ctx);
    if (out.timedOut) throw toolError(tool, `git ${args[0]} timed out`);
    return out;
  }

  async function gitOk(
    tool: string,
    repo: { top: string; pinned: Record<string, string> },
    args: readonly string[],
    ctx: ToolRunContext,
  ): Promise<string> {
    const out = await git(tool, repo, args, ctx);
    if (out.exitCode !== 0)
      throw toolError(tool, `git ${args[0]} failed (exit ${String(out.exitCode)}): ${out.stderr.trim().slice(0, 500)}`);
    return out.stdout;
  }

  /** True when the repository-relative `path` lies in a protected path (the data directory inside the work tree). */
  const hidden = (top: string, path: string): boolean => isProtectedPath(normalizePosixPath(join(top, path)), paths);

  /** Refuses when a change git would show or commit lies in a protected path (the data directory inside the work tree). */
  async function refuseProtectedChanges(
    tool: string,
    repo: { top: string; pinned: Record<string, string> },
    args: readonly string[],
    ctx: ToolRunContext,
  ): Promise<void> {
    if (!paths.roots.some((r) => r !== repo.top && isWithin(r, repo.top))) return;
    const out = await gitOk(tool, repo, ['status', '--porcelain=v1', '-z', '--ignore-submodules=all', ...args], ctx);
    const inside = parsePorcelain(out)
      .entries.flatMap((e) => (e.from === undefined ? [e.path] : [e.path, e.from]))
      .find((p) => hidden(repo.top, p));
    if (inside !== undefined) {
      throw new AivyxError(
        'CapabilityDenied',
        `${tool}: a change lies inside aivyx's data directory (${inside}), which no tool reaches below the Kernel tier`,
        {
          hint: 'name the paths to diff or commit, outside the data directory, or move AIVYX_HOME out of the repository',
          detail: { tool, scope: dataDirScope(normalizePosixPath(join(repo.top, inside))) },
        },
      );
    }
  }

  const status = implementTool(gitStatusTool, {
    resolveScope: async (input) => placeScope('git.read', await locate('git.status', input.repo, quietCtx())),
    async run(input, ctx) {
      const repo = await open('git.status', 'git.read', input.repo, ctx);
      const res = await git(
        'git.status',
        repo,
        ['status', '--porcelain=v1', '-z', '--branch', '--untracked-files=all', '--ignore-submodules=all'],
        ctx,
      );
      if (res.exitCode !== 0)
        throw toolError('git.status', `git status failed (exit ${String(res.exitCode)}): ${res.stderr.trim().slice(0, 500)}`);
      const { branch, entries: all } = parsePorcelain(res.stdout);
      // The data directory inside the work tree is not the repository's business (not even its names).
      const entries = all
        .filter((e) => !hidden(repo.top, e.path) && (e.from === undefined || !hidden(repo.top, e.from)))
        .map((e) => ({ status: e.status, path: e.from === undefined ? e.path : `${e.from} -> ${e.path}` }));
      return { kind: 'completed', output: { repo: repo.top, branch, entries, truncated: res.truncated }, verified: 'NotApplicable' };
    },
  });

  const diff = implementTool(gitDiffTool, {
    resolveScope: async (input) => placeScope('git.read', await locate('git.diff', input.repo, quietCtx())),
    async run(req, ctx) {
      const repo = await open('git.diff', 'git.read', req.repo, ctx);
      const pathspec = ['--', ...(req.paths ?? [])];
      await refuseProtectedChanges('git.diff', repo, ['--untracked-files=no', ...pathspec], ctx);
      const args = [
        'diff',
        '--no-ext-diff',
        '--no-textconv',
        '--no-color',
        '--ignore-submodules=all',
        ...(req.staged ? ['--cached'] : []),
        ...pathspec,
      ];
      const out = await git('git.diff', repo, args, ctx);
      if (out.exitCode !== 0)
        throw toolError('git.diff', `git diff failed (exit ${String(out.exitCode)}): ${out.stderr.trim().slice(0, 500)}`);
      return { kind: 'completed', output: { repo: repo.top, diff: out.stdout, truncated: out.truncated }, verified: 'NotApplicable' };
    },
  });

  const commit = implementTool(gitCommitTool, {
    resolveScope: async (input) => placeScope('git.write', await locate('git.commit', input.repo, quietCtx())),
    async run(req, ctx) {
      const repo = await open('git.commit', 'git.write', req.repo, ctx);
      const top = repo.top;
      // What would be committed: the named paths (untracked ones too, they are added), or what is staged.
      await refuseProtectedChanges(
        'git.commit',
        repo,
        req.paths ? ['--untracked-files=all', '--', ...req.paths] : ['--untracked-files=no'],
        ctx,
      );
      const parentOut = await git('git.commit', repo, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], ctx);
      const parent = parentOut.exitCode === 0 ? parentOut.stdout.trim() : null;
      ctx.signal.throwIfAborted();

      const claim = await deps.intents.begin(ctx.idemKey, { tool: 'git.commit', inputHash: commitHash(req) });
      if (claim === 'already-started') {
        throw toolError('git.commit', "was interrupted and is not re-run (at-most-once); check the repository's log", {
          detail: { idemKey: ctx.idemKey, atMostOnce: true },
          hint: `inspect git log in ${top}`,
        });
      }
      let summary = 'failed before it ended';
      try {
        if (req.paths) await gitOk('git.commit', repo, ['add', '-A', '--', ...req.paths], ctx);
        const args = [
          'commit',
          '--no-verify',
          '--cleanup=verbatim',
          `--message=${req.message}`,
          ...(req.paths ? ['--only', '--', ...req.paths] : []),
        ];
        const out = await git('git.commit', repo, args, ctx);
        if (out.exitCode !== 0) {
          const text = `${out.stdout}\n${out.stderr}`;
          throw toolError(
            'git.commit',
            /nothing (added )?to commit|no changes added/i.test(text)
              ? 'nothing to commit'
              : `git commit failed (exit ${String(out.exitCode)}): ${out.stderr.trim().slice(0, 500)}`,
          );
        }
        // Verified by reading back: HEAD moved onto the old HEAD, carries our message, and its tree is the index.
        const head = (await gitOk('git.commit', repo, ['rev-parse', '--verify', 'HEAD^{commit}'], ctx)).trim();
        const parents = (await gitOk('git.commit', repo, ['rev-list', '--parents', '-n', '1', head], ctx)).trim().split(' ').slice(1);
        const body = await gitOk('git.commit', repo, ['log', '-1', '--format=%B', head], ctx);
        const tree = (await gitOk('git.commit', repo, ['rev-parse', `${head}^{tree}`], ctx)).trim();
        const index = (await gitOk('git.commit', repo, ['write-tree'], ctx)).trim();
        const ok =
          head !== parent &&
          (parent === null ? parents.length === 0 : parents.length === 1 && parents[0] === parent) &&
          body.replace(/\n+$/, '') === req.message.replace(/\n+$/, '') &&
          tree === index;
        summary = `committed ${head.slice(0, 12)}`;
        return { kind: 'completed', output: { repo: top, commit: head, parent }, verified: ok ? 'Verified' : 'Unverified' };
      } catch (e) {
        summary = ctx.signal.aborted ? 'cancelled' : e instanceof AivyxError ? e.message : 'failed';
        throw e;
      } finally {
        await recordIntentEnd(deps.intents, ctx.idemKey, summary);
      }
    },
  });

  return [status, diff, commit];
}

function commitHash(req: GitCommitInput): string {
  return createHash('sha256')
    .update(JSON.stringify({ repo: req.repo, message: req.message, paths: req.paths }))
    .digest('hex');
}
