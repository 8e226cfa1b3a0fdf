/**
 * git.status, git.diff and git.commit as the core knows them (pure, workflow-safe). The scope is
 * `git.read:<repo>` / `git.write:<repo>` over the lexically normalized repo path; the activity
 * re-derives it over the real toplevel (symlinks resolved, `git rev-parse --show-toplevel`).
 * Inputs never carry git options: paths go after `--` as literal pathspecs, the message is one
 * `--message=` value, and nothing the caller gives can become `-c`, `--exec-path` or the like.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { absolutePathField, booleanField, says, textField } from './fields.js';

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

/** The repository: an absolute, concrete (no glob) path, lexically normalized. */
const repoField = () =>
  absolutePathField('repo', 'Absolute path of the repository (its top-level directory).', {
    hint: 'give the full path of the repository, starting with /',
    concrete: true,
  });

/** Repository-relative literal paths (no pathspec magic reaches git: they follow `--`). */
const pathsField = () => {
  const m = says(`"paths" must be a non-empty array of at most ${GIT_MAX_PATHS} strings`);
  return z
    .array(z.string({ error: m }), { error: m })
    .min(1, { error: m })
    .max(GIT_MAX_PATHS, { error: m })
    .superRefine((paths, ctx) => {
      const empty = paths.findIndex((p) => p === '');
      // eslint-disable-next-line no-control-regex -- refusing control characters is the point
      const control = paths.findIndex((p) => /[\u0000-\u001f\u007f]/.test(p));
      if (empty >= 0) ctx.addIssue({ code: 'custom', message: says(`paths[${empty}] must be a non-empty string`) });
      else if (control >= 0) ctx.addIssue({ code: 'custom', message: says(`paths[${control}] contains a control character`) });
    })
    .describe('Paths relative to the repository (literal, no pathspec magic).')
    .optional();
};

/** `git.status`: branch and changed files of a repository. */
export const gitStatusTool = defineTool({
  id: 'git.status',
  description:
    'Show the branch and the changed/untracked files of a git repository. Returns {repo, branch, entries: [{status, path}], truncated}.',
  input: () => z.strictObject({ repo: repoField() }),
  scope: { base: 'git.read', qualifier: (i) => i.repo },
  idempotency: 'natural',
  // File names in a work tree are chosen by whoever wrote them (a cloned repository's authors).
  provenance: { output: 'untrusted', effect: false },
});

/** `git.diff`: the working-tree (or staged) diff of a repository. */
export const gitDiffTool = defineTool({
  id: 'git.diff',
  summary: 'Show the diff of a git working tree or index',
  description:
    'Show the diff of the working tree against the index, or of the index against HEAD with staged=true. Returns {repo, diff, truncated}.',
  input: () =>
    z.strictObject({
      repo: repoField(),
      staged: booleanField('staged', 'Diff the index against HEAD.').default(false),
      paths: pathsField(),
    }),
  canonical: ({ paths, ...rest }): GitDiffInput => ({ ...rest, ...(paths ? { paths } : {}) }),
  scope: { base: 'git.read', qualifier: (i) => i.repo },
  idempotency: 'natural',
  provenance: { output: 'untrusted', effect: false },
});

/** `git.commit`: commit the staged changes (or the given paths), at most once, hooks never run. */
export const gitCommitTool = defineTool({
  id: 'git.commit',
  description:
    'Commit to a git repository: with "paths", stages and commits exactly those paths; without, commits what is staged. Hooks never run. Returns {repo, commit, parent}. Not re-run if interrupted.',
  input: () =>
    z.strictObject({
      repo: repoField(),
      message: textField('message', GIT_MAX_MESSAGE, 'The commit message.', { nul: true }),
      paths: pathsField(),
    }),
  canonical: ({ paths, ...rest }): GitCommitInput => ({ ...rest, ...(paths ? { paths } : {}) }),
  scope: { base: 'git.write', qualifier: (i) => i.repo },
  idempotency: 'at-most-once',
  confirmFirst: true,
  provenance: { output: 'trusted', effect: true, contentFields: ['message'], launders: true },
});

export const parseGitStatusInput = gitStatusTool.parse;
export const parseGitDiffInput = gitDiffTool.parse;
export const parseGitCommitInput = gitCommitTool.parse;
