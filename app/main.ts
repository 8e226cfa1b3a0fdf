/**
 * The `aivyx` command: the composition root of the CLI. Only here (and in other entry points)
 * is configuration read from the environment.
 *
 *   aivyx up                      start everything and keep running (restarting its dev server if it dies)
 *   aivyx worker [--no-host-tools] | aivyx gateway     the scale-out roles on a real cluster (docs/DEPLOY.md)
 *   aivyx chat [-m TEXT] [--session ID | --new] [--follow TURN | --resume TURN] [--standalone]
 *   aivyx chat -m /clear [--session ID]
 *   aivyx approve|deny [GATE]    (no GATE: the one gate waiting for you)
 *   aivyx audit verify [--checkpoint FILE] | tail [-n N] | pubkey | prove SEQ | consistency CHECKPOINT  [--json]
 *   aivyx mission create | list | show | approve | deny | cancel [--standalone]
 *   aivyx sessions [--json]
 *   aivyx approvals
 *   aivyx specialists [--json] | stop ID
 *   aivyx app [--no-open]         a single-use sign-in link for the owner's app in a browser
 *   aivyx memory list [--query Q] [--topic T] [--limit N] | show ID | forget ID
 *   aivyx inbox [--json] | dismiss ID
 *   aivyx passphrase change
 *   aivyx config [--json | --markdown]
 *   aivyx temporal setup [--address A] [--namespace N]
 */
// Only what every command needs is imported here; each command loads its own modules when it runs,
// so `aivyx --help` and the REST-only commands (chat, mission, approvals…) start in a fraction of a second.
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { AivyxError, describeError } from '../core/errors.js';
import type { TurnOutcome } from '../core/outcomes.js';
import { describeEnv, envMarkdownTable, loadConfig, type AivyxConfig } from '../infra/config.js';
import { describeCause } from '../infra/health.js';
import { describeRole, findRunningStack, inspectHome, makeHome, type HomeState } from '../infra/home-lock.js';
import { restToken } from '../infra/home-tokens.js';
import { promptHidden } from '../infra/passphrase.js';
import { AUDIT_USAGE } from '../channels/cli/audit-usage.js';
import {
  askInline,
  chatRepl,
  chatTurn,
  clearConversation,
  DETACHED_EXIT_CODE,
  detachedLine,
  followTurn,
  OUTCOME_EXIT_CODES,
  TurnDetached,
} from '../channels/cli/chat.js';
import { runInboxCommand } from '../channels/cli/inbox-commands.js';
import { CLEAR_COMMAND } from '../channels/ports.js';
import { runMemoryCommand } from '../channels/cli/memory-commands.js';
import { runGraphCommand, runSkillsCommand } from '../channels/cli/skill-commands.js';
import { MISSION_USAGE, runMissionCommand } from '../channels/cli/mission-commands.js';
import { DECIDE_USAGE, runApprovalsCommand, runDecisionCommand } from '../channels/cli/gate-commands.js';
import { resolveTurnId } from '../channels/cli/id-lookup.js';
import type { RestTarget } from '../channels/cli/rest-client.js';
import { runSessionsCommand } from '../channels/cli/session-commands.js';
import { runSpecialistsCommand } from '../channels/cli/specialist-commands.js';
import { unknownCommand } from '../channels/cli/did-you-mean.js';
import { projectRoot } from './project-root.js';
import type { Stack, StackRole } from './stack.js';

/** The passphrase for a command that opens the install: at a terminal, a new one asked twice or a wrong one asked again. */
async function passphrase(config: AivyxConfig): Promise<string> {
  const { unlockingPassphrase } = await import('../channels/cli/unlock-passphrase.js');
  return unlockingPassphrase(config, (q) => promptHidden(q));
}

/** The modules of the commands that open the database or start a stack (loaded on use). */
const directCommands = () => import('../channels/cli/audit-commands.js');

const root = projectRoot();
/** Every command `main` knows (what "did you mean" chooses from). */
const COMMANDS = [
  'up',
  'worker',
  'gateway',
  'chat',
  'audit',
  'mission',
  'sessions',
  'approvals',
  'specialists',
  'app',
  'approve',
  'deny',
  'memory',
  'skills',
  'graph',
  'inbox',
  'secrets',
  'passphrase',
  'temporal',
  'storage',
  'config',
  'help',
] as const;

/** The owner's time zone: AIVYX_TIME_ZONE, else the system's (TZ, /etc/localtime). */
function ownerTimeZone(config: AivyxConfig): string {
  return config.env.AIVYX_TIME_ZONE ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}
const USAGE = `usage:
  aivyx up                               start Temporal, the database, the worker and the local channels
  aivyx worker [--no-host-tools]         on a cluster: run workflows and activities only (TEMPORAL_ADDRESS, DATABASE_URL);
                                         --no-host-tools: this machine does not own the files (AIVYX_HOST_QUEUE)
  aivyx gateway                          on a cluster: serve REST, the chat channels and the UI's codec endpoint, no worker
  aivyx chat [-m TEXT] [--session ID]    talk to the running aivyx up (REPL, or one message with -m)
  aivyx chat --new                       the REPL continues your last session; --new starts another
  aivyx chat -m /clear [--session ID]    clear that session's context (/clear in the REPL): no earlier text, no taint from it
  aivyx chat --follow TURN               show how a turn that outlived its client ends (the id chat printed, or its start)
  aivyx chat --resume TURN               the same; a turn waiting for your approval asks approve? [y/N/details]
         … --standalone                  (chat, mission) run on a stack of this command's own when no aivyx up runs
  aivyx sessions [--json]                the open conversations (a session closes after a day without a message)
  aivyx approvals                        the gates waiting for you, each with the call it would run
  aivyx specialists [--json] | stop ID   the specialists running for your requests; stop one (its lead is told, goes on)
  aivyx app [--no-open]                  sign in to the owner's app in a browser: a link that works once (docs/APP.md)
${DECIDE_USAGE}
  aivyx memory list|show ID|forget ID    what the assistant remembers (scope-checked and audited like its tools)
  aivyx skills list|show NAME|edit NAME|retire NAME
                                         the skills you approved (proposed in conversations, approved at their gates)
  aivyx graph predicates [add P]         the knowledge graph's predicate vocabulary
  aivyx inbox [--json] | dismiss ID      notices for you and replies that could not reach the chat they were asked in
  aivyx config [--json | --markdown]     every AIVYX_* variable: its value and where it came from (env/default)
${AUDIT_USAGE}
  aivyx secrets set NAME                 store a secret (value from stdin or a hidden prompt), sealed
  aivyx secrets list                     names of stored secrets (never values)
  aivyx storage rotate-keys              re-seal every stored row under the next key-schedule version (resumable)
  aivyx passphrase change                set a new passphrase (typed twice, or stdin's first line); nothing is re-sealed
  aivyx temporal setup [--address HOST:PORT] [--namespace NS]
                                         on a real cluster: raise retention and register the dashboard search attributes
${MISSION_USAGE}`;

async function start(
  config: AivyxConfig,
  extra: { restPort?: number; headless?: boolean; quiet?: boolean; role: StackRole; noHostTools?: boolean },
  pass: string,
): Promise<Stack> {
  const [{ DefaultLogger, Runtime }, { startStack }, { telegramSettingsFromEnv }, { emailSettingsFromEnv }, { processLogs }] =
    await Promise.all([
      import('@temporalio/worker'),
      import('./stack.js'),
      import('../channels/telegram/index.js'),
      import('../channels/email/index.js'),
      import('../infra/telemetry/logs.js'),
    ]);
  // Text for a person, or JSON lines with redacted fields for a log pipeline (AIVYX_LOG_FORMAT).
  const logs = processLogs(config.env.AIVYX_LOG_FORMAT, (s) => process.stderr.write(s));
  // Our own handlers decide what a signal means (chat: cancel the turn; up: stop everything), so
  // the SDK must not shut the worker down on SIGINT; and a person's terminal wants warnings only.
  // The core's own retry warnings would flood stderr while a dependency is down; aivyx reports that itself.
  Runtime.install({
    logger: new DefaultLogger('WARN', logs.sdk),
    shutdownSignals: [],
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
  // The channels' settings are checked before any database opens or server starts.
  telegramSettingsFromEnv(process.env);
  emailSettingsFromEnv(process.env);
  return startStack({
    config,
    passphrase: pass,
    projectRoot: root,
    env: process.env,
    ...extra,
    log: extra.quiet ? () => undefined : logs.line,
  });
}

const STANDALONE_HINT =
  'or add --standalone to run this command on a stack of its own (it holds the data directory while it runs, so aivyx up cannot start meanwhile)';

/** Why a command that needs `aivyx up` will not start a second stack silently. */
function noStack(found: Exclude<HomeState, { state: 'running' }>, home: string): AivyxError {
  switch (found.state) {
    case 'free':
      return new AivyxError('Config', `no aivyx up is running on ${home}`, {
        hint: `start it (aivyx up, in another terminal) and try again, ${STANDALONE_HINT}`,
      });
    case 'stale':
      return new AivyxError(
        'Config',
        `the ${describeRole(found.role)} that ran on ${home} (pid ${found.pid}) is gone: it stopped without cleaning up (killed or crashed)`,
        {
          hint: `start aivyx up again (it takes over the stale lock), ${STANDALONE_HINT}`,
        },
      );
    case 'busy':
      return new AivyxError(
        'Config',
        `${describeRole(found.role)} (pid ${found.pid}) holds ${home} and serves no REST channel${found.role === 'up' ? ' yet: it is starting' : ''}`,
        {
          hint: found.role === 'up' ? 'try again in a moment' : 'wait for it to finish, or stop it',
        },
      );
  }
}

/**
 * The REST channel of the running `aivyx up` (found again on each use: it may have restarted),
 * or with `--standalone` a stack started here for this command. Without either it refuses.
 */
async function target(config: AivyxConfig, standalone: boolean): Promise<{ target: () => RestTarget; stop(): Promise<void> }> {
  const found = inspectHome(config.home);
  if (found.state === 'running') {
    if (standalone)
      throw new AivyxError(
        'Config',
        `${describeRole(found.stack.role)} is running on ${config.home} (pid ${found.stack.pid}): --standalone would start a second stack`,
        { hint: 'drop --standalone to use it' },
      );
    const token = restToken(config.home);
    const current = (): RestTarget => {
      const running = findRunningStack(config.home);
      if (!running)
        throw new AivyxError('Channel', `aivyx up on ${config.home} is gone`, {
          hint: 'start it again',
          detail: { unavailable: true, dependency: 'aivyx up' },
        });
      return { url: running.restUrl, token, downloads: join(config.home, 'downloads') };
    };
    return { target: current, stop: async () => undefined };
  }
  if (!standalone) throw noStack(found, config.home);
  const stack = await start(config, { restPort: 0, headless: true, quiet: true, role: 'standalone' }, await passphrase(config));
  return {
    target: () => ({ url: stack.restUrl!, token: stack.restToken, downloads: join(config.home, 'downloads') }),
    stop: () => stack.stop(),
  };
}

/** Takes `--standalone` out of a command's arguments. */
function standaloneFlag(args: string[]): { standalone: boolean; rest: string[] } {
  return { standalone: args.includes('--standalone'), rest: args.filter((a) => a !== '--standalone') };
}

/** Runs until SIGINT/SIGTERM (then stops the stack), or until the stack cannot go on (then stops it and fails). */
async function untilSignalled(stack: Stack): Promise<number> {
  const failure = await Promise.race([
    new Promise<undefined>((resolve) => {
      process.once('SIGINT', () => resolve(undefined));
      process.once('SIGTERM', () => resolve(undefined));
    }),
    stack.failed,
  ]);
  process.stderr.write('aivyx: stopping…\n');
  await stack.stop();
  if (failure) throw failure;
  return 0;
}

/** `aivyx worker` / `aivyx gateway`: one process of a scale-out install (docs/DEPLOY.md). */
async function scaleOutRole(config: AivyxConfig, role: 'worker' | 'gateway', args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { 'no-host-tools': { type: 'boolean' } }, allowPositionals: false });
  if (role === 'gateway' && values['no-host-tools'])
    throw new AivyxError('Config', '--no-host-tools is an option of aivyx worker', { hint: 'a gateway runs no tools' });
  const stack = await start(config, { role, noHostTools: values['no-host-tools'] === true }, await passphrase(config));
  process.stdout.write(
    role === 'worker'
      ? `aivyx worker is polling ${stack.taskQueue}${config.hostQueue && !values['no-host-tools'] ? ` and ${config.hostQueue}` : ''} on ${stack.temporalAddress}.\n`
      : [
          `aivyx gateway is serving on ${stack.temporalAddress}.`,
          `  REST channel: ${stack.restUrl}  (bearer token in ${config.home}/rest-token)`,
          ...(stack.codecUrl ? [`  Codec server: ${stack.codecUrl}  (token in ${config.home}/codec-token)`] : []),
          '',
        ].join('\n'),
  );
  return untilSignalled(stack);
}

async function up(config: AivyxConfig): Promise<number> {
  const stack = await start(config, { role: 'up' }, await passphrase(config));
  process.stdout.write(
    [
      'aivyx is up.',
      `  Temporal UI:  ${stack.uiUrl ?? `(external cluster at ${stack.temporalAddress})`}${stack.uiUrl && stack.uiUrl === stack.codecUrl ? `  (shows payloads decoded once you sign in with the token in ${config.home}/codec-token; docs/OPERATOR-UI.md)` : ''}`,
      `  Temporal:     ${stack.temporalAddress}  (namespace ${config.namespace}, task queue ${stack.taskQueue}, install ${stack.installId})`,
      `  REST channel: ${stack.restUrl}  (bearer token in ${config.home}/rest-token)`,
      ...(stack.appUrl ? [`  App:          ${stack.appUrl}  (sign in with the link \`aivyx app\` prints)`] : []),
      ...(stack.codecUrl
        ? [`  Codec server: ${stack.codecUrl}  (also for temporal --codec-endpoint; token in ${config.home}/codec-token)`]
        : []),
      `  Talk to it:   npm run aivyx -- chat        (Ctrl-C here stops everything)`,
      '',
    ].join('\n'),
  );
  return untilSignalled(stack);
}

async function chat(config: AivyxConfig, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      message: { type: 'string', short: 'm' },
      session: { type: 'string' },
      new: { type: 'boolean' },
      follow: { type: 'string' },
      resume: { type: 'string' },
      standalone: { type: 'boolean' },
    },
  });
  // --resume is --follow by its everyday name: a turn waiting for approval is asked about at a terminal.
  const follow = values.follow ?? values.resume;
  if ([values.follow, values.resume, values.message].filter((v) => v !== undefined).length > 1)
    throw new AivyxError('Config', 'chat takes one of -m, --follow and --resume', { hint: USAGE });
  if (values.new && (values.session !== undefined || values.message !== undefined || follow !== undefined))
    throw new AivyxError('Config', 'chat --new starts a new REPL session: without -m, --session, --follow or --resume', {
      hint: 'run `aivyx chat --new` alone (a one-shot `chat -m` never continues a session)',
    });
  const t = await target(config, values.standalone ?? false);
  const io = { out: (s: string) => process.stdout.write(s), err: (s: string) => process.stderr.write(s) };
  try {
    if (values.message === undefined && follow === undefined) {
      const { replSession } = await import('../channels/cli/last-session.js');
      const { sessionId, continued } = replSession(config.home, {
        ...(values.session ? { session: values.session } : {}),
        fresh: values.new === true,
      });
      await chatRepl(t.target, sessionId, continued);
      return 0;
    }
    // `chat -m /clear`: the conversation the REPL continues (or --session's) starts afresh.
    if (values.message?.trim() === CLEAR_COMMAND) {
      const { lastSession } = await import('../channels/cli/last-session.js');
      const sessionId = values.session ?? lastSession(config.home);
      if (sessionId === undefined) io.err('no conversation to clear (aivyx chat starts one)\n');
      else await clearConversation(t.target(), sessionId, io);
      return 0;
    }
    // A turn may be named by its start (`chat --follow 849b32b3`), like every id.
    let turnId = follow === undefined ? undefined : await resolveTurnId(t.target(), follow);
    const outcome: TurnOutcome =
      turnId !== undefined
        ? await followTurn(t.target(), turnId, io)
        : // One message and no --session: nothing follows it, so its session closes when the turn ends.
          await chatTurn(
            t.target(),
            values.message!,
            values.session ?? `cli-${randomUUID()}`,
            io,
            (id) => (turnId = id),
            values.session === undefined,
          );
    // At a terminal the owner is present: ask now, as the REPL does; otherwise exit 3 and `aivyx approvals` decides later.
    if (outcome.status === 'Escalated' && turnId && process.stdin.isTTY) {
      const after = await askInline(t.target(), turnId, io);
      if (after) return OUTCOME_EXIT_CODES[after.status];
    }
    return OUTCOME_EXIT_CODES[outcome.status];
  } catch (err) {
    if (!(err instanceof TurnDetached)) throw err;
    io.err(detachedLine(err));
    return DETACHED_EXIT_CODE;
  } finally {
    await t.stop();
  }
}

/** `aivyx config`: every variable of the table with its value (secrets: set/unset) and source; non-zero when one is invalid. */
function configCommand(args: string[]): number {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' }, markdown: { type: 'boolean' } } });
  if (values.markdown) {
    process.stdout.write(`${envMarkdownTable()}\n`);
    return 0;
  }
  const rows = describeEnv(process.env);
  if (values.json) process.stdout.write(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
  else {
    const width = Math.max(...rows.map((r) => r.name.length));
    let group = '';
    for (const r of rows) {
      if (r.group !== group) process.stdout.write(`${group ? '\n' : ''}# ${(group = r.group)}\n`);
      process.stdout.write(`${r.name.padEnd(width)}  ${r.value}  (${r.source})${r.error ? `\n${' '.repeat(width)}  ✗ ${r.error}` : ''}\n`);
    }
  }
  return rows.some((r) => r.error) ? 1 : 0;
}

async function audit(config: AivyxConfig, args: string[]): Promise<number> {
  const { parseAuditCommand, printAudit, restAuditPort, runAuditCommand, withDirectAuditPort } = await directCommands();
  const cmd = await parseAuditCommand(args, readStdin);
  const running = findRunningStack(config.home);
  const result = running
    ? await runAuditCommand(cmd, restAuditPort({ url: running.restUrl, token: restToken(config.home) }))
    : await withDirectAuditPort(config, await passphrase(config), (port) => runAuditCommand(cmd, port));
  return printAudit(cmd, result, (s) => process.stdout.write(s));
}

/**
 * Runs a command that talks to the running `aivyx up` over REST (or, with --standalone, to a stack of
 * its own started for it): mission, sessions, approvals.
 */
async function overRest(
  config: AivyxConfig,
  args: string[],
  run: (rest: string[], target: RestTarget, out: (s: string) => void) => Promise<number>,
): Promise<number> {
  const { standalone, rest } = standaloneFlag(args);
  const t = await target(config, standalone);
  try {
    return await run(rest, t.target(), (s) => process.stdout.write(s));
  } finally {
    await t.stop();
  }
}

/** `aivyx temporal setup`: what `aivyx up` does on connect, as a separate step an operator can run with operator rights. */
async function temporal(config: AivyxConfig, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'setup') throw new AivyxError('Config', `unknown temporal command "${sub ?? ''}"`, { hint: USAGE });
  const { values } = parseArgs({ args: rest, options: { address: { type: 'string' }, namespace: { type: 'string' } } });
  const address = values.address ?? config.temporalAddress;
  if (!address)
    throw new AivyxError('Config', 'no cluster to set up', {
      hint: 'pass --address HOST:PORT or set TEMPORAL_ADDRESS (the local dev server is set up by `aivyx up` itself)',
    });
  const namespace = values.namespace ?? config.namespace;
  const [{ Connection }, { clusterConnectionOptions, ensureNamespaceSetup, MIN_RETENTION_HOURS }] = await Promise.all([
    import('@temporalio/client'),
    import('../infra/temporal/index.js'),
  ]);
  const connection = await Connection.connect(clusterConnectionOptions(address, process.env)).catch((err: unknown) => {
    throw new AivyxError('Channel', `cannot reach Temporal at ${address}: ${describeCause(err)}`, {
      hint: 'check that the cluster is up and the address is right',
      cause: err,
    });
  });
  try {
    const done = await ensureNamespaceSetup(connection, namespace);
    process.stdout.write(
      [
        `namespace ${namespace} on ${address}:`,
        `  retention: ${done.retentionRaised ? `raised to ${MIN_RETENTION_HOURS} h` : `already at least ${MIN_RETENTION_HOURS} h`}`,
        `  search attributes: ${done.added.length > 0 ? `registered ${done.added.join(', ')}` : 'all present'}`,
        '',
      ].join('\n'),
    );
    return 0;
  } finally {
    await connection.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'config') return configCommand(args);
  // Every setting is checked here (the channels' when a stack starts), before any database opens or server starts.
  const config = loadConfig(process.env, root);
  switch (command) {
    case 'up':
      return up(config);
    case 'worker':
    case 'gateway':
      return scaleOutRole(config, command, args);
    case 'chat':
      return chat(config, args);
    case 'audit':
      return audit(config, args);
    case 'mission':
      return overRest(config, args, (rest, t, out) => runMissionCommand(rest, t, out, { timeZone: ownerTimeZone(config) }));
    case 'approve':
    case 'deny':
      return overRest(config, args, (rest, t, out) => runDecisionCommand(command, rest, t, out));
    case 'sessions':
      return overRest(config, args, runSessionsCommand);
    case 'approvals':
      return overRest(config, args, (_rest, t, out) => runApprovalsCommand(t, out));
    case 'specialists':
      return overRest(config, args, runSpecialistsCommand);
    case 'app': {
      const { values } = parseArgs({ args, options: { 'no-open': { type: 'boolean' } } });
      const found = inspectHome(config.home);
      if (found.state !== 'running')
        throw new AivyxError('Config', `no aivyx up is running on ${config.home}: the app is served by it`, {
          hint: 'start aivyx up (in another terminal) and run aivyx app again',
        });
      const { runAppCommand } = await import('../channels/app/app-command.js');
      return runAppCommand(
        { appUrl: found.stack.appUrl, restToken: restToken(config.home) },
        { open: !values['no-open'] && process.stdout.isTTY === true, out: (s) => process.stdout.write(s), env: process.env },
      );
    }
    case 'memory':
      return overRest(config, args, runMemoryCommand);
    case 'skills':
      return overRest(config, args, runSkillsCommand);
    case 'graph':
      return overRest(config, args, runGraphCommand);
    case 'inbox':
      return overRest(config, args, runInboxCommand);
    case 'secrets': {
      const [{ withStorage }, { runSecretsCommand }] = await Promise.all([directCommands(), import('../channels/cli/secrets-commands.js')]);
      // The first command of an install may be this one: the data directory is made as `aivyx up` makes it.
      if (!config.databaseUrl) makeHome(config.home);
      const pass = await passphrase(config);
      return withStorage(
        config,
        (storage) =>
          runSecretsCommand(args, {
            storage,
            readStdin,
            out: (s) => process.stdout.write(s),
            ...(process.stdin.isTTY ? { prompt: (q: string) => promptHidden(q) } : {}),
          }),
        pass,
      );
    }
    case 'passphrase': {
      const [{ withDatabase }, { runPassphraseCommand }] = await Promise.all([
        directCommands(),
        import('../channels/cli/passphrase-commands.js'),
      ]);
      const current = await passphrase(config);
      return withDatabase(config, (db) =>
        runPassphraseCommand(args, {
          db,
          current: () => Promise.resolve(current),
          readStdin,
          out: (s) => process.stdout.write(s),
          ...(process.stdin.isTTY ? { prompt: (q: string) => promptHidden(q) } : {}),
        }),
      );
    }
    case 'temporal':
      return temporal(config, args);
    case 'storage': {
      const [{ withStorage }, { runRotateCommand }] = await Promise.all([directCommands(), import('../channels/cli/secrets-commands.js')]);
      const pass = await passphrase(config);
      return withStorage(config, (storage) => runRotateCommand(args, { storage, out: (s) => process.stdout.write(s) }), pass);
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`aivyx: ${unknownCommand(command, COMMANDS)}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  async (err: unknown) => {
    const { isTemporalUnreachable } = await import('../infra/temporal/client-errors.js');
    const shown =
      err instanceof AivyxError
        ? describeError(err.toData())
        : isTemporalUnreachable(err)
          ? `Temporal is unreachable: ${describeCause(err)} (is aivyx up running? with TEMPORAL_ADDRESS, check that cluster)`
          : err instanceof Error
            ? err.message
            : String(err);
    process.stderr.write(`aivyx: ${shown}\n`);
    process.exit(1);
  },
);
