/** The commands `aivyx` knows and its usage text. */
import { AUDIT_USAGE } from '../../channels/cli/audit-usage.js';
import { DECIDE_USAGE } from '../../channels/cli/gate-commands.js';
import { MISSION_USAGE } from '../../channels/cli/mission-commands.js';

/** Every command `main` knows (what "did you mean" chooses from). */
export const COMMANDS = [
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

/** What `aivyx help` prints (and the hint of a command given wrong arguments). */
export const USAGE = `usage:
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
