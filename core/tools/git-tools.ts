/**
 * git.status, git.diff and git.commit as the core knows them (pure, workflow-safe). The scope is
 * `git.read:<repo>` / `git.write:<repo>` over the lexically normalized repo path; the activity
 * re-derives it over the real toplevel (symlinks resolved, `git rev-parse --show-toplevel`).
 * Inputs never carry git options: paths go after `--` as literal pathspecs, the message is one
 * `--message=` value, and nothing the caller gives can become `-c`, `--exec-path` or the like.
 */
import { asRecord, invalid } from './tool-input.js';
import { AivyxError } from '../errors.js';
import { normalizePosixPath } from '../path.js';
import type { ToolDescriptor } from '../tools.js';

/** Validated input of `git.status`; `repo` is lexically normalized. */
export interface GitStatusInput {
  repo: string;
}

/** Validated input of `git.diff`. */
export interface GitDiffInput {
  repo: string;
  staged: boolean;
  paths?: string[];
}

/** Validated input of `git.commit`. */
export interface GitCommitInput {
  repo: string;
  message: string;
  paths?: string[];
}

/** Most pathspecs one call may name. */
export const GIT_MAX_PATHS = 100;
/** Longest commit message (characters). */
export const GIT_MAX_MESSAGE = 10_000;
/** Tools that should be confirm-first by default (add to AIVYX_CONFIRM_FIRST). */
export const GIT_CONFIRM_FIRST: readonly string[] = Object.freeze(['git.commit']);

function repoPath(tool: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') throw invalid(tool, '"repo" must be a non-empty string');
  if (!value.startsWith('/')) throw invalid(tool, `"repo" must be an absolute path, got "${value}"`, 'give the full path of the repository, starting with /');
  if (/[*?[\]{}]/.test(value)) throw invalid(tool, '"repo" must be a concrete path, not a glob');
  try {
    return normalizePosixPath(value);
  } catch (cause) {
    if (cause instanceof AivyxError) throw new AivyxError(cause.kind, `${tool}: ${cause.message}`, { detail: { tool }, ...(cause.hint === undefined ? {} : { hint: cause.hint }), cause });
    throw cause;
  }
}

function pathList(tool: string, value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.length > GIT_MAX_PATHS) throw invalid(tool, `"paths" must be a non-empty array of at most ${GIT_MAX_PATHS} strings`);
  return value.map((p, i) => {
    if (typeof p !== 'string' || p === '') throw invalid(tool, `paths[${i}] must be a non-empty string`);
    // eslint-disable-next-line no-control-regex -- refusing control characters is the point
    if (/[\u0000-\u001f\u007f]/.test(p)) throw invalid(tool, `paths[${i}] contains a control character`);
    return p;
  });
}

/** Validates a `git.status` input; throws AivyxError(InvalidScope). */
export function parseGitStatusInput(input: unknown): GitStatusInput {
  const rec = asRecord('git.status', input, ['repo']);
  return { repo: repoPath('git.status', rec.repo) };
}

/** Validates a `git.diff` input; throws AivyxError(InvalidScope). */
export function parseGitDiffInput(input: unknown): GitDiffInput {
  const rec = asRecord('git.diff', input, ['repo', 'staged', 'paths']);
  if (rec.staged !== undefined && typeof rec.staged !== 'boolean') throw invalid('git.diff', '"staged" must be true or false');
  const out: GitDiffInput = { repo: repoPath('git.diff', rec.repo), staged: rec.staged === true };
  const paths = pathList('git.diff', rec.paths);
  if (paths) out.paths = paths;
  return out;
}

/** Validates a `git.commit` input; throws AivyxError(InvalidScope). */
export function parseGitCommitInput(input: unknown): GitCommitInput {
  const rec = asRecord('git.commit', input, ['repo', 'message', 'paths']);
  if (typeof rec.message !== 'string' || rec.message.trim() === '') throw invalid('git.commit', '"message" must be a non-empty string');
  if (rec.message.length > GIT_MAX_MESSAGE) throw invalid('git.commit', `"message" is longer than ${GIT_MAX_MESSAGE} characters`);
  if (rec.message.includes('\0')) throw invalid('git.commit', '"message" contains a NUL byte');
  const out: GitCommitInput = { repo: repoPath('git.commit', rec.repo), message: rec.message };
  const paths = pathList('git.commit', rec.paths);
  if (paths) out.paths = paths;
  return out;
}

const REPO_PROP = { type: 'string', description: 'Absolute path of the repository (its top-level directory).' };
const PATHS_PROP = { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: GIT_MAX_PATHS, description: 'Paths relative to the repository (literal, no pathspec magic).' };

/** `git.status`: branch and changed files of a repository. */
export const gitStatusTool: ToolDescriptor = {
  id: 'git.status',
  description: 'Show the branch and the changed/untracked files of a git repository. Returns {repo, branch, entries: [{status, path}], truncated}.',
  inputSchema: { type: 'object', properties: { repo: REPO_PROP }, required: ['repo'], additionalProperties: false },
  requiredScope: (input) => `git.read:${parseGitStatusInput(input).repo}`,
  idempotency: 'natural',
};

/** `git.diff`: the working-tree (or staged) diff of a repository. */
export const gitDiffTool: ToolDescriptor = {
  id: 'git.diff',
  description: 'Show the diff of the working tree against the index, or of the index against HEAD with staged=true. Returns {repo, diff, truncated}.',
  inputSchema: {
    type: 'object',
    properties: { repo: REPO_PROP, staged: { type: 'boolean', default: false }, paths: PATHS_PROP },
    required: ['repo'],
    additionalProperties: false,
  },
  requiredScope: (input) => `git.read:${parseGitDiffInput(input).repo}`,
  idempotency: 'natural',
};

/** `git.commit`: commit the staged changes (or the given paths), at most once, hooks never run. */
export const gitCommitTool: ToolDescriptor = {
  id: 'git.commit',
  description: 'Commit to a git repository: with "paths", stages and commits exactly those paths; without, commits what is staged. Hooks never run. Returns {repo, commit, parent}. Not re-run if interrupted.',
  inputSchema: {
    type: 'object',
    properties: { repo: REPO_PROP, message: { type: 'string', description: 'The commit message.' }, paths: PATHS_PROP },
    required: ['repo', 'message'],
    additionalProperties: false,
  },
  requiredScope: (input) => `git.write:${parseGitCommitInput(input).repo}`,
  idempotency: 'at-most-once',
};

/** The git tools in the order the model is shown them. */
export const GIT_TOOLS: readonly ToolDescriptor[] = Object.freeze([gitStatusTool, gitDiffTool, gitCommitTool]);
