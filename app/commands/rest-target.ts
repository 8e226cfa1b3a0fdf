/** How a command reaches the assistant: the running `aivyx up`'s REST channel, or a `--standalone` stack of its own. */
import { join } from 'node:path';
import { AivyxError } from '../../core/errors.js';
import type { RestTarget } from '../../channels/cli/rest-client.js';
import type { AivyxConfig } from '../../infra/config.js';
import { describeRole, findRunningStack, inspectHome, type HomeState } from '../../infra/home-lock.js';
import { restToken } from '../../infra/home-tokens.js';
import { passphrase } from './common.js';
import { start } from './stack-commands.js';

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
export async function target(config: AivyxConfig, standalone: boolean): Promise<{ target: () => RestTarget; stop(): Promise<void> }> {
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

/**
 * Runs a command that talks to the running `aivyx up` over REST (or, with --standalone, to a stack of
 * its own started for it): mission, sessions, approvals.
 */
export async function overRest(
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
