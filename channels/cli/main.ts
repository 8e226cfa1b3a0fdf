/**
 * The `aivyx` command: the composition root of the CLI. Only here (and in other entry points)
 * is configuration read from the environment.
 *
 *   aivyx up                      start everything and keep running
 *   aivyx chat [-m TEXT] [--session ID]
 *   aivyx audit verify [--checkpoint FILE] | tail [-n N] | pubkey | prove SEQ | consistency CHECKPOINT  [--json]
 *   aivyx mission create | list | show | approve | deny | cancel
 *   aivyx temporal setup [--address A] [--namespace N]
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { AivyxError, describeError } from '../../core/errors.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { loadConfig, type AivyxConfig } from '../../infra/config.js';
import { findRunningStack } from '../../infra/home-lock.js';
import { promptHidden } from '../../infra/passphrase.js';
import { ensureNamespaceSetup, MIN_RETENTION_HOURS } from '../../infra/temporal/index.js';
import { cliPassphrase as passphrase } from './passphrase.js';
import { restToken, startStack, type Stack } from '../../infra/stack.js';
import { AUDIT_USAGE, parseAuditCommand, printAudit, restAuditPort, runAuditCommand, withDirectAuditPort, withStorage } from './audit-commands.js';
import { runRotateCommand, runSecretsCommand } from './secrets-commands.js';
import { chatRepl, chatTurn, OUTCOME_EXIT_CODES } from './chat.js';
import { MISSION_USAGE, runMissionCommand } from './mission-commands.js';
import type { RestTarget } from './rest-client.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const USAGE = `usage:
  aivyx up                               start Temporal, the database, the worker and the local channels
  aivyx chat [-m TEXT] [--session ID]    talk to the assistant (REPL, or one message with -m)
${AUDIT_USAGE}
  aivyx secrets set NAME                 store a secret (value from stdin or a hidden prompt), sealed
  aivyx secrets list                     names of stored secrets (never values)
  aivyx storage rotate-keys              re-seal every stored row under the next key-schedule version (resumable)
  aivyx temporal setup [--address HOST:PORT] [--namespace NS]
                                         on a real cluster: raise retention and register the dashboard search attributes
${MISSION_USAGE}`;


function start(config: AivyxConfig, extra: { restPort?: number; headless?: boolean; quiet?: boolean }, pass: string): Promise<Stack> {
  return startStack({ config, passphrase: pass, projectRoot, env: process.env, ...extra, log: extra.quiet ? () => undefined : (l) => process.stderr.write(`aivyx: ${l}\n`) });
}

/** The REST channel of a running `aivyx up`, or a stack started here for this command. */
async function target(config: AivyxConfig): Promise<{ target: RestTarget; stop(): Promise<void> }> {
  const running = findRunningStack(config.home);
  if (running) return { target: { url: running.restUrl, token: restToken(config.home) }, stop: async () => undefined };
  const stack = await start(config, { restPort: 0, headless: true, quiet: true }, await passphrase());
  return { target: { url: stack.restUrl, token: stack.restToken }, stop: () => stack.stop() };
}

async function up(config: AivyxConfig): Promise<number> {
  const stack = await start(config, {}, await passphrase());
  process.stdout.write(
    [
      'aivyx is up.',
      `  Temporal UI:  ${stack.uiUrl ?? `(external cluster at ${stack.temporalAddress})`}`,
      `  Temporal:     ${stack.temporalAddress}`,
      `  REST channel: ${stack.restUrl}  (bearer token in ${config.home}/rest-token)`,
      ...(stack.codecUrl
        ? [`  Codec server: ${stack.codecUrl}  — to read decoded histories in the UI, sign in once at ${stack.codecUrl}/login with the token in ${config.home}/codec-token (docs/OPERATOR-UI.md)`]
        : []),
      `  Talk to it:   npm run aivyx -- chat        (Ctrl-C here stops everything)`,
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stderr.write('aivyx: stopping…\n');
  await stack.stop();
  return 0;
}

async function chat(config: AivyxConfig, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { message: { type: 'string', short: 'm' }, session: { type: 'string' } } });
  const t = await target(config);
  try {
    if (values.message === undefined) {
      await chatRepl(t.target, values.session);
      return 0;
    }
    const outcome: TurnOutcome = await chatTurn(t.target, values.message, values.session ?? `cli-${randomUUID()}`, {
      out: (s) => process.stdout.write(s),
      err: (s) => process.stderr.write(s),
    });
    return OUTCOME_EXIT_CODES[outcome.status];
  } finally {
    await t.stop();
  }
}

async function audit(config: AivyxConfig, args: string[]): Promise<number> {
  const cmd = await parseAuditCommand(args, readStdin);
  const running = findRunningStack(config.home);
  const result = running
    ? await runAuditCommand(cmd, restAuditPort({ url: running.restUrl, token: restToken(config.home) }))
    : await withDirectAuditPort(config, await passphrase(), (port) => runAuditCommand(cmd, port));
  return printAudit(cmd, result, (s) => process.stdout.write(s));
}

async function mission(config: AivyxConfig, args: string[]): Promise<number> {
  const t = await target(config);
  try {
    return await runMissionCommand(args, t.target, (s) => process.stdout.write(s));
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
  if (!address) throw new AivyxError('Config', 'no cluster to set up', { hint: 'pass --address HOST:PORT or set TEMPORAL_ADDRESS (the local dev server is set up by `aivyx up` itself)' });
  const namespace = values.namespace ?? config.namespace;
  const connection = await Connection.connect({ address });
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
  // Our own handlers decide what a signal means (chat: cancel the turn; up: stop everything), so
  // the SDK must not shut the worker down on SIGINT; and a person's terminal wants warnings only.
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
  const config = loadConfig(process.env, projectRoot);
  switch (command) {
    case 'up':
      return up(config);
    case 'chat':
      return chat(config, args);
    case 'audit':
      return audit(config, args);
    case 'mission':
      return mission(config, args);
    case 'secrets':
      return withStorage(config, (storage) =>
        runSecretsCommand(args, { storage, readStdin, out: (s) => process.stdout.write(s), ...(process.stdin.isTTY ? { prompt: (q: string) => promptHidden(q) } : {}) }),
      );
    case 'temporal':
      return temporal(config, args);
    case 'storage':
      return withStorage(config, (storage) => runRotateCommand(args, { storage, out: (s) => process.stdout.write(s) }));
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`aivyx: unknown command "${command}"\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`aivyx: ${err instanceof AivyxError ? describeError(err.toData()) : err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
