/** `aivyx chat`: the REPL, one message, `/clear`, or following a turn that outlived its client. */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import type { TurnOutcome } from '../../core/outcomes.js';
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
} from '../../channels/cli/chat.js';
import { resolveTurnId } from '../../channels/cli/id-lookup.js';
import { CLEAR_COMMAND } from '../../channels/ports.js';
import type { AivyxConfig } from '../../infra/config.js';
import { target } from './rest-target.js';
import { USAGE } from './usage.js';

/** Runs `aivyx chat` with its arguments; the exit code says how the turn ended. */
export async function chat(config: AivyxConfig, args: string[]): Promise<number> {
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
      const { replSession } = await import('../../channels/cli/last-session.js');
      const { sessionId, continued } = replSession(config.home, {
        ...(values.session ? { session: values.session } : {}),
        fresh: values.new === true,
      });
      await chatRepl(t.target, sessionId, continued);
      return 0;
    }
    // `chat -m /clear`: the conversation the REPL continues (or --session's) starts afresh.
    if (values.message?.trim() === CLEAR_COMMAND) {
      const { lastSession } = await import('../../channels/cli/last-session.js');
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
