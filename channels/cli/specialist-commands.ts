/**
 * `aivyx specialists [--json]` and `aivyx specialists stop ID`: the specialists running for lead turns
 * now, and the owner's stop of one (needs `agent.terminate:<specialist>`; audited), through the running
 * `aivyx up`'s REST channel. The lead is told the owner stopped it, and goes on.
 */
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import { restJson, type RestTarget } from './rest-client.js';

export const SPECIALISTS_USAGE = `usage:
  aivyx specialists [--json]     the specialists running now: child id, specialist, lead turn, what it is doing
  aivyx specialists stop ID      stop one (its child id); its lead is told and goes on with the others`;

/** A running specialist as GET /v1/specialists lists it. */
interface Listed {
  childTurnId: string;
  specialist: string;
  leadTurnId: string;
  state: string;
  startTime: string;
}

/** Runs `specialists [--json]` or `specialists stop ID` against `target`; returns the exit code. */
export async function runSpecialistsCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  const [sub, ...rest] = positionals;
  if (sub === undefined) {
    const { specialists } = (await restJson(target, 'GET', '/v1/specialists')) as { specialists: Listed[] };
    if (values.json) out(specialists.map((s) => `${JSON.stringify(s)}\n`).join(''));
    else if (specialists.length === 0) out('no specialist is running\n');
    else
      out(
        specialists
          .map((s) => `${s.childTurnId}\n  ${s.specialist} for lead ${s.leadTurnId} · ${s.state} (since ${s.startTime})\n`)
          .join(''),
      );
    return 0;
  }
  if (sub !== 'stop' || rest.length !== 1)
    throw new AivyxError(
      'Config',
      sub === 'stop' ? 'specialists stop needs exactly one child turn id' : `unknown specialists command "${sub}"`,
      {
        hint: SPECIALISTS_USAGE,
      },
    );
  const stopped = (await restJson(target, 'POST', `/v1/specialists/${encodeURIComponent(rest[0]!)}/stop`)) as Listed & { stopped: string };
  out(`stopped ${stopped.specialist} (${stopped.stopped}); its lead ${stopped.leadTurnId} is told and goes on\n`);
  return 0;
}
