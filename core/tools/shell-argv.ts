/**
 * The scope a command tool call (`shell.exec`, `shell.spawn`) needs, derived from its argv alone
 * (pure, workflow-safe; docs/TOOLS.md "Command scopes").
 *
 * - The qualifier names the command and its leading plain words (lowercase subcommands, flags
 *   without values: `git status --short`); from the first other argument on it is `*` ("more
 *   arguments follow"). Paths, values and tokens are never written into a scope, because scopes
 *   are audited. `shell.exec:git status *` therefore grants `git status --short` and
 *   `git status /repo`, never `git push`.
 * - A call whose argv makes the program execute something named by its arguments (a shell, an
 *   interpreter, `env`/`xargs`/`sudo`-style wrappers, `git -c …`, `find -exec`, `sed` without
 *   `--sandbox`, …) needs the UNQUALIFIED base: rule 4 keeps every qualified grant from reaching
 *   it. This is a denylist of what is known to execute arguments, so it errs towards "unqualified".
 */
import { ARGV_SCOPE_MAX_WORDS, PLAIN_ARGV_WORD } from '../capability/qualifier.js';

/** Programs that run code named by their arguments, whatever the arguments are: shells, interpreters, wrappers. */
const ALWAYS_EXECUTES: ReadonlySet<string> = new Set([
  // shells
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'pdksh',
  'yash',
  'fish',
  'csh',
  'tcsh',
  'ash',
  'rc',
  'es',
  'elvish',
  'nu',
  'xonsh',
  'pwsh',
  'powershell',
  // programs that run another program given as an argument
  'env',
  'xargs',
  'nice',
  'ionice',
  'renice',
  'timeout',
  'sudo',
  'doas',
  'su',
  'runuser',
  'pkexec',
  'setpriv',
  'nohup',
  'stdbuf',
  'unbuffer',
  'time',
  'watch',
  'setsid',
  'chroot',
  'unshare',
  'nsenter',
  'flock',
  'chrt',
  'taskset',
  'numactl',
  'chpst',
  'systemd-run',
  'firejail',
  'bwrap',
  'script',
  'expect',
  'parallel',
  'run-parts',
  'busybox',
  'toybox',
  'command',
  'builtin',
  'exec',
  'eval',
  'strace',
  'ltrace',
  'gdb',
  'lldb',
  'valgrind',
  'perf',
  'catchsegv',
  'ssh',
  'tmux',
  'screen',
  'dbus-launch',
  'xdg-open',
  'open',
  'crontab',
  'at',
  'batch',
  'docker',
  'podman',
  'kubectl',
  // editors, pagers and tools with a command or shell escape
  'vi',
  'vim',
  'nvim',
  'view',
  'ex',
  'ed',
  'emacs',
  'less',
  'more',
  'most',
  'man',
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'm4',
  'dc',
  // interpreters
  'irb',
  'jruby',
  'deno',
  'bun',
  'ts-node',
  'tsx',
  'node',
  'nodejs',
  'osascript',
  'java',
  'jshell',
  'groovy',
  'scala',
  'kotlin',
  'swift',
  'guile',
  'racket',
  'sbcl',
  'clisp',
  'ecl',
  'ghci',
  'runghc',
  'runhaskell',
  'erl',
  'escript',
  'elixir',
  'iex',
  'ocaml',
  'julia',
  'R',
  'Rscript',
  'wish',
]);

/** Interpreters spelled with a version suffix (`python3.12`, `perl5.36`, `lua5.4`). */
const VERSIONED_INTERPRETER = /^(python|pypy|perl|ruby|php|lua|luajit|tclsh|node)[0-9.]*$/;

/** git global options that neither run programs nor move git out of the working directory. */
const GIT_SAFE_GLOBAL_OPTIONS: ReadonlySet<string> = new Set([
  '--no-pager',
  '--no-replace-objects',
  '--literal-pathspecs',
  '--no-optional-locks',
  '--version',
]);

/**
 * git builtins that do not run a program named by their arguments. An alias or an external
 * `git-<name>` is not a builtin and may run anything; `config`, `submodule`, `bisect`, `difftool`,
 * `mergetool`, `help`, `clone`, `archive`, `filter-branch`, `send-email` … are left out on purpose.
 */
const GIT_SAFE_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'add',
  'annotate',
  'blame',
  'branch',
  'cat-file',
  'check-attr',
  'check-ignore',
  'check-ref-format',
  'checkout',
  'cherry',
  'cherry-pick',
  'clean',
  'commit',
  'count-objects',
  'describe',
  'diff',
  'diff-files',
  'diff-index',
  'diff-tree',
  'fetch',
  'for-each-ref',
  'format-patch',
  'fsck',
  'grep',
  'hash-object',
  'init',
  'log',
  'ls-files',
  'ls-remote',
  'ls-tree',
  'merge',
  'merge-base',
  'mv',
  'name-rev',
  'notes',
  'pull',
  'push',
  'rebase',
  'reflog',
  'remote',
  'reset',
  'restore',
  'rev-list',
  'rev-parse',
  'revert',
  'rm',
  'shortlog',
  'show',
  'show-branch',
  'show-ref',
  'stash',
  'status',
  'switch',
  'tag',
  'version',
  'whatchanged',
  'worktree',
  'write-tree',
]);

/** git subcommand options (any subcommand) that name a program to run or switch on one. */
const GIT_EXECUTING_LONG_OPTIONS = [
  '--upload-pack',
  '--receive-pack',
  '--exec',
  '--ext-diff',
  '--open-files-in-pager',
  '--strategy',
  '--template',
  '--gpg-sign',
  '--config',
  '--config-env',
  '--exec-path',
];

/** git subcommand short options that run a program, per subcommand (`rebase -x`, `grep -O`, `merge -s`, signing). */
const GIT_EXECUTING_SHORT: Readonly<Record<string, readonly string[]>> = {
  rebase: ['x', 's', 'S'],
  grep: ['O'],
  merge: ['s', 'S'],
  pull: ['s', 'S'],
  'cherry-pick': ['s', 'S'],
  revert: ['s', 'S'],
  commit: ['S'],
  tag: ['s', 'u'],
  'ls-remote': ['u'],
};

/** The letters of a short-option cluster (`-avz` → avz), or '' for anything else. */
function shortCluster(arg: string): string {
  return /^-[A-Za-z0-9]/.test(arg) ? arg.slice(1) : '';
}

function gitRisk(args: readonly string[]): string | undefined {
  let i = 0;
  for (; i < args.length && (args[i] as string).startsWith('-'); i++) {
    const opt = args[i] as string;
    if (!GIT_SAFE_GLOBAL_OPTIONS.has(opt))
      return `git option ${JSON.stringify(opt.split('=')[0])} before the subcommand can run programs or point git elsewhere (-c, --config-env, --exec-path, -C, --git-dir, -p …)`;
  }
  const sub = args[i];
  if (sub === undefined) return undefined;
  if (!GIT_SAFE_SUBCOMMANDS.has(sub))
    return `"git ${sub}" is not a git builtin known not to run programs (an alias or external git command may run anything)`;
  const short = GIT_EXECUTING_SHORT[sub] ?? [];
  for (const arg of args.slice(i + 1)) {
    if (arg === '--') break;
    const long = GIT_EXECUTING_LONG_OPTIONS.find((o) => arg === o || arg.startsWith(`${o}=`));
    if (long !== undefined) return `"git ${sub} ${long}" runs a program`;
    const letter = [...shortCluster(arg)].find((c) => short.includes(c));
    if (!arg.startsWith('--') && letter !== undefined) return `"git ${sub} -${letter}" runs a program`;
  }
  return undefined;
}

const FIND_EXECUTING = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls']);
const TAR_EXECUTING_LONG = [
  '--to-command',
  '--checkpoint-action',
  '--use-compress-program',
  '--info-script',
  '--new-volume-script',
  '--rsh-command',
  '--rmt-command',
];

function tarRisk(args: readonly string[]): string | undefined {
  for (const [i, arg] of args.entries()) {
    const long = TAR_EXECUTING_LONG.find((o) => arg === o || arg.startsWith(`${o}=`));
    if (long !== undefined) return `"tar ${long}" runs a program`;
    // Old-style first argument (`tar xIf …`) or a short cluster: -I names a compressor, -F a volume script.
    const cluster = arg.startsWith('--') ? '' : i === 0 && !arg.startsWith('-') ? arg : shortCluster(arg);
    if (/[IF]/.test(cluster)) return '"tar -I/-F" runs a program';
  }
  return undefined;
}

/** Per-program checks for programs that run something only with certain arguments. */
const CONDITIONAL: Readonly<Record<string, (args: readonly string[]) => string | undefined>> = {
  git: gitRisk,
  find: (args) => {
    const a = args.find((x) => FIND_EXECUTING.has(x));
    return a === undefined ? undefined : `"find ${a}" runs a program or writes/deletes files`;
  },
  sed: (args) =>
    args.includes('--sandbox') ? undefined : 'sed can run commands (e) and read or write any file (r, w) unless given --sandbox',
  gsed: (args) =>
    args.includes('--sandbox') ? undefined : 'sed can run commands (e) and read or write any file (r, w) unless given --sandbox',
  tar: tarRisk,
  gtar: tarRisk,
  bsdtar: tarRisk,
  rsync: (args) =>
    args.some(
      (a) => a === '--rsh' || a.startsWith('--rsh=') || a.startsWith('--rsync-path') || (/e/.test(shortCluster(a)) && !a.startsWith('--')),
    )
      ? 'rsync -e/--rsh/--rsync-path runs a program'
      : undefined,
  scp: (args) =>
    args.some((a) => !a.startsWith('--') && /[oSFJ]/.test(shortCluster(a)))
      ? 'scp -o/-S/-F/-J can run a program (ProxyCommand, ssh program)'
      : undefined,
  sftp: (args) =>
    args.some((a) => !a.startsWith('--') && /[oSFJD]/.test(shortCluster(a))) ? 'sftp -o/-S/-F/-J/-D can run a program' : undefined,
  zip: (args) => (args.some((a) => a === '-TT' || a.startsWith('--unzip-command')) ? 'zip -TT/--unzip-command runs a program' : undefined),
  wget: (args) =>
    args.some(
      (a) => a === '-e' || a.startsWith('--execute') || a.startsWith('--use-askpass') || (!a.startsWith('--') && /e/.test(shortCluster(a))),
    )
      ? 'wget -e/--execute/--use-askpass can run a program'
      : undefined,
};

/**
 * Why `argv` would make its program execute something named by its arguments (so it needs an
 * unqualified grant), or undefined when it is not known to. Deny by default: unknown shapes of
 * the programs above count as executing.
 */
export function argvExecutionRisk(argv: readonly string[]): string | undefined {
  const [command, ...args] = argv;
  if (command === undefined) return undefined;
  if (ALWAYS_EXECUTES.has(command) || VERSIONED_INTERPRETER.test(command)) return `${command} runs code or programs named by its arguments`;
  return CONDITIONAL[command]?.(args);
}

/**
 * The canonical needed qualifier of `argv`: the command, then its leading plain words, then `*`
 * when further arguments follow. A command alone (no plain words) is the bare name (any arguments).
 */
export function argvScopeQualifier(argv: readonly string[]): string {
  const [command, ...args] = argv as [string, ...string[]];
  const words: string[] = [];
  for (const arg of args) {
    if (words.length === ARGV_SCOPE_MAX_WORDS || !PLAIN_ARGV_WORD.test(arg)) break;
    words.push(arg);
  }
  if (words.length === 0) return command;
  return [command, ...words, ...(words.length < args.length ? ['*'] : [])].join(' ');
}

/** The scope a command tool call needs: `<base>:<argv qualifier>`, or the bare base when the argv executes its arguments. */
export function commandScope(base: 'shell.exec' | 'shell.spawn', argv: readonly string[]): string {
  return argvExecutionRisk(argv) === undefined ? `${base}:${argvScopeQualifier(argv)}` : base;
}
