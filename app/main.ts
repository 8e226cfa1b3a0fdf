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
import { AivyxError, describeError } from '../core/errors.js';
import { loadConfig } from '../infra/config.js';
import { describeCause } from '../infra/health.js';
import { runInboxCommand } from '../channels/cli/inbox-commands.js';
import { runMemoryCommand } from '../channels/cli/memory-commands.js';
import { runGraphCommand, runSkillsCommand } from '../channels/cli/skill-commands.js';
import { runMissionCommand } from '../channels/cli/mission-commands.js';
import { runApprovalsCommand, runDecisionCommand } from '../channels/cli/gate-commands.js';
import { runSessionsCommand } from '../channels/cli/session-commands.js';
import { runSpecialistsCommand } from '../channels/cli/specialist-commands.js';
import { unknownCommand } from '../channels/cli/did-you-mean.js';
import { audit, configCommand, temporal } from './commands/admin-commands.js';
import { chat } from './commands/chat-command.js';
import { ownerTimeZone, root } from './commands/common.js';
import { appCommand, passphraseCommand, secretsCommand, storageCommand } from './commands/install-commands.js';
import { overRest } from './commands/rest-target.js';
import { scaleOutRole, up } from './commands/stack-commands.js';
import { COMMANDS, USAGE } from './commands/usage.js';

/** Runs one `aivyx` command; what it returns is the process's exit code. */
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
    case 'app':
      return appCommand(config, args);
    case 'memory':
      return overRest(config, args, runMemoryCommand);
    case 'skills':
      return overRest(config, args, runSkillsCommand);
    case 'graph':
      return overRest(config, args, runGraphCommand);
    case 'inbox':
      return overRest(config, args, runInboxCommand);
    case 'secrets':
      return secretsCommand(config, args);
    case 'passphrase':
      return passphraseCommand(config, args);
    case 'temporal':
      return temporal(config, args);
    case 'storage':
      return storageCommand(config, args);
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
