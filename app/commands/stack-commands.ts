/** The commands that run a stack until stopped: `aivyx up`, `aivyx worker`, `aivyx gateway`; and starting a stack. */
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import type { AivyxConfig } from '../../infra/config.js';
import type { Stack, StackRole } from '../stack.js';
import { passphrase, root } from './common.js';

/** Starts this process's stack (its modules loaded now), with the SDK's runtime and the process's logs set up. */
export async function start(
  config: AivyxConfig,
  extra: { restPort?: number; headless?: boolean; quiet?: boolean; role: StackRole; noHostTools?: boolean },
  pass: string,
): Promise<Stack> {
  const [{ DefaultLogger, Runtime }, { startStack }, { telegramSettingsFromEnv }, { emailSettingsFromEnv }, { processLogs }] =
    await Promise.all([
      import('@temporalio/worker'),
      import('../stack.js'),
      import('../../channels/telegram/index.js'),
      import('../../channels/email/index.js'),
      import('../../infra/telemetry/logs.js'),
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
export async function scaleOutRole(config: AivyxConfig, role: 'worker' | 'gateway', args: string[]): Promise<number> {
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

/** `aivyx up`: the whole assistant in this process until stopped. */
export async function up(config: AivyxConfig): Promise<number> {
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
