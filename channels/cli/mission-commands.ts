/**
 * `aivyx mission …`: missions through the REST channel of a running `aivyx up` (or a stack
 * started for the command). Approvals are by `local-user` on the `cli` channel, tier Trusted.
 *
 *   mission create --goal TEXT [--step TEXT … | --plan] [--notify TEXT] [--every D | --cron C [--time-zone TZ]] [--approver IDENTITY …] | <file.json>
 *   mission create --in 2h | --at "tomorrow 09:00" [--time-zone TZ] --say TEXT    a reminder (no JSON file)
 *   mission pause|resume|delete <schedule id>   a recurring mission's schedule
 *   mission list [--state S] [--json]
 *   mission show <id> [--json]
 *   mission approve|deny [gate] [--mission ID] [--reason R]   (no gate: the one waiting for you; channels/cli/gate-commands.ts)
 * Every id may be given by its start (a short id, like git's; channels/cli/id-lookup.ts).
 *   mission cancel <id> [--reason R]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import { waitStepAt, waitStepIn } from '../../core/reminder-time.js';
import { describeSpendAgainst } from '../../core/spend.js';
import type { MissionSummary, ScheduleRow } from '../ports.js';
import type { MissionStatus } from '../../workflows/mission-messages.js';
import { gateLines, runDecisionCommand } from './gate-commands.js';
import { resolveMissionId, resolveScheduleId } from './id-lookup.js';
import { restJson, type RestTarget } from './rest-client.js';

/** The usage lines of `aivyx mission`. */
export const MISSION_USAGE = `  aivyx mission create --in 2h | --at "tomorrow 09:00" [--time-zone Europe/Berlin] --say TEXT   a reminder: TEXT arrives then
  aivyx mission create --goal TEXT [--step TEXT ...] [--notify TEXT] [--approver ID] [--capability SCOPE ...]   start a mission (or: mission create FILE.json)
      [--plan]   … from the goal alone: the assistant plans the steps, you approve the plan first
      [--every 7d | --cron "0 8 * * MON" [--time-zone Europe/Berlin]]   … as a recurring mission (each run a mission)
  aivyx mission schedules [--json]              the recurring missions: paused or not, next runs, last run
  aivyx mission pause|resume|delete SCHEDULE    pause, resume or delete a recurring mission's schedule
  aivyx mission list [--state S] [--json]       missions, by dashboard state (running, waiting, completed, …)
  aivyx mission show ID [--json]                a mission's state, step and open gate
  aivyx mission approve [GATE] [--reason R]     approve a gate as local-user (no GATE: the one waiting for you)
  aivyx mission deny [GATE] [--reason R]        deny a gate as local-user
  aivyx mission cancel ID [--reason R]          cancel a mission (an open gate is withdrawn)
      (an ID or GATE may be its start, like git's short ids: mission show 8926)`;

/** What `mission create` needs besides its arguments. */
export interface MissionCommandOptions {
  /** The zone `--at` times are in without `--time-zone` (AIVYX_TIME_ZONE, else the system's). */
  timeZone: string;
  /** The clock `--at` is read against (ms). */
  now?: () => number;
}

const MISSION_OPTIONS = {
  goal: { type: 'string' },
  step: { type: 'string', multiple: true },
  notify: { type: 'string' },
  say: { type: 'string' },
  in: { type: 'string' },
  at: { type: 'string' },
  capability: { type: 'string', multiple: true },
  plan: { type: 'boolean' },
  every: { type: 'string' },
  cron: { type: 'string' },
  'time-zone': { type: 'string' },
  approver: { type: 'string', multiple: true },
  state: { type: 'string' },
  mission: { type: 'string' },
  reason: { type: 'string' },
  json: { type: 'boolean' },
} as const;

type MissionValues = ReturnType<typeof parseArgs<{ options: typeof MISSION_OPTIONS; allowPositionals: true }>>['values'];

/** A plain Error of core/reminder-time.ts as the CLI's `Config` error. */
function asConfig<T>(f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new AivyxError('Config', (e as Error).message, {
      hint: 'e.g. --in 2h, --in 1h30m, --at "tomorrow 09:00", --at 17:30, --at "2027-03-01 09:00" (with --time-zone Europe/Berlin)',
    });
  }
}

/** The first step of a reminder: `--in` a duration, or `--at` a local time in the zone (none without either). */
function whenStep(values: MissionValues, opts: MissionCommandOptions): object[] {
  if (values.in !== undefined && values.at !== undefined)
    throw new AivyxError('Config', 'give --in or --at, not both', { hint: MISSION_USAGE });
  if ((values.in ?? values.at) !== undefined && (values.every ?? values.cron) !== undefined)
    throw new AivyxError('Config', '--in/--at wait once; --every/--cron repeat: give one kind', { hint: MISSION_USAGE });
  if (values.in !== undefined) return [asConfig(() => waitStepIn(values.in!))];
  if (values.at !== undefined) {
    const tz = values['time-zone'] ?? opts.timeZone;
    return [asConfig(() => waitStepAt(values.at!, tz, (opts.now ?? Date.now)()))];
  }
  return [];
}

/** The spec `mission create` sends, from its options (a reminder, a mission of steps, or a recurring one). */
export function missionSpecOf(values: MissionValues, opts: MissionCommandOptions): Record<string, unknown> {
  const notices = [values.notify, values.say].filter((t): t is string => t !== undefined).map((notify) => ({ notify }));
  const goal = values.goal ?? values.say ?? values.notify;
  if (!goal)
    throw new AivyxError('Config', 'mission create needs --goal TEXT, --say TEXT (a reminder) or a JSON file', { hint: MISSION_USAGE });
  const steps = [...whenStep(values, opts), ...(values.step ?? []), ...notices];
  // A mission of waits and notices runs no tools: it holds no capabilities unless some are asked for.
  const onlyNotices = steps.length > 0 && !steps.some((st) => typeof st === 'string') && !values.plan;
  const capabilities = values.capability ?? (onlyNotices ? [] : undefined);
  const recurring = values.every !== undefined || values.cron !== undefined;
  return {
    goal,
    ...(steps.length > 0 ? { steps } : {}),
    ...(values.plan ? { plan: true } : {}),
    ...(values.approver ? { approvers: values.approver } : {}),
    ...(capabilities ? { capabilities } : {}),
    ...(recurring
      ? {
          schedule: {
            ...(values.every !== undefined ? { every: values.every } : {}),
            ...(values.cron !== undefined ? { cron: values.cron } : {}),
            ...(values['time-zone'] !== undefined ? { timeZone: values['time-zone'] } : {}),
          },
        }
      : {}),
  };
}

/** One row of `mission list`: its state, an open gate, and the workflow's status only when it says more than the state. */
function listLine(r: MissionSummary): string {
  const ended = r.status !== 'RUNNING' && r.status !== 'COMPLETED' ? `, workflow ${r.status.toLowerCase().replace(/_/g, ' ')}` : '';
  return `${r.missionId}  ${r.state ?? r.status.toLowerCase()}${r.openGate ? `  gate ${r.openGate}` : ''}  (started ${r.startTime}${ended})\n`;
}

/** Where a mission is, as the UI says it: `step 2 of 2`, 1-based, never past the last step. */
export function stepLine(s: { step: number; stepsRun: number; steps?: number }): string {
  const of = s.steps === undefined ? '' : ` of ${s.steps}`;
  const at = s.steps === undefined ? s.step + 1 : Math.min(s.step + 1, s.steps);
  return `  step ${at}${of} (${s.stepsRun} step run${s.stepsRun === 1 ? '' : 's'} so far)`;
}

/** Runs one `mission` subcommand against `target`; returns the exit code. */
export async function runMissionCommand(
  args: string[],
  target: RestTarget,
  out: (s: string) => void,
  opts: MissionCommandOptions = { timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone },
): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'approve' || sub === 'deny') return runDecisionCommand(sub, rest, target, out);
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: MISSION_OPTIONS });
  const one = (what: string): string => {
    const v = positionals[0];
    if (!v || positionals.length > 1)
      throw new AivyxError('Config', `mission ${sub ?? ''} needs exactly one ${what}`, { hint: MISSION_USAGE });
    return v;
  };
  switch (sub) {
    case 'create': {
      let spec: Record<string, unknown>;
      if (positionals.length > 0) {
        const file = one('definition file');
        try {
          spec = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        } catch (e) {
          throw new AivyxError('Config', `cannot read mission file ${file}: ${e instanceof Error ? e.message : String(e)}`);
        }
      } else spec = missionSpecOf(values, opts);
      const r = (await restJson(target, 'POST', '/v1/missions', spec)) as { missionId?: string; scheduleId?: string };
      out(values.json ? `${JSON.stringify(r)}\n` : r.scheduleId ? `recurring mission ${r.scheduleId}\n` : `${r.missionId}\n`);
      return 0;
    }
    case 'schedules': {
      const rows = (await restJson(target, 'GET', '/v1/schedules')) as ScheduleRow[];
      if (values.json) out(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
      else if (rows.length === 0) out('no recurring missions\n');
      else
        out(
          rows
            .map(
              (r) =>
                `${r.scheduleId}  ${r.paused ? 'paused' : `next ${r.next[0] ?? '?'}`}${r.lastRun ? `  (last run ${r.lastRun.at}: ${r.lastRun.workflowId})` : ''}\n`,
            )
            .join(''),
        );
      return 0;
    }
    case 'pause':
    case 'resume':
    case 'delete': {
      const id = await resolveScheduleId(target, one('schedule id'));
      const r = (await restJson(
        target,
        sub === 'delete' ? 'DELETE' : 'POST',
        `/v1/schedules/${encodeURIComponent(id)}${sub === 'delete' ? '' : `/${sub}`}`,
        sub === 'delete' ? undefined : {},
      )) as { state: string };
      out(`recurring mission ${id}: ${r.state}\n`);
      return 0;
    }
    case 'list': {
      const rows = (await restJson(
        target,
        'GET',
        `/v1/missions${values.state ? `?state=${encodeURIComponent(values.state)}` : ''}`,
      )) as MissionSummary[];
      if (values.json) out(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
      else out(rows.length === 0 ? 'no missions\n' : rows.map(listLine).join(''));
      return 0;
    }
    case 'show': {
      const id = await resolveMissionId(target, one('mission id'));
      const s = (await restJson(target, 'GET', `/v1/missions/${encodeURIComponent(id)}`)) as MissionStatus & {
        status: string;
        steps?: number;
        result?: { reason?: string };
      };
      if (values.json) {
        out(`${JSON.stringify(s)}\n`);
        return 0;
      }
      const ended = s.status !== 'RUNNING' && s.status !== 'COMPLETED' ? ` (workflow ${s.status.toLowerCase().replace(/_/g, ' ')})` : '';
      const lines = [`mission ${s.missionId}: ${s.state}${ended}`, stepLine(s)];
      if (s.waiting) lines.push(`  waiting: ${s.waiting}`);
      if (s.spent || s.budget) lines.push(`  spent: ${describeSpendAgainst(s.spent, s.budget)}`);
      if (s.gate) lines.push(...gateLines(s.gate));
      if (s.result?.reason) lines.push(`  reason: ${s.result.reason}`);
      out(`${lines.join('\n')}\n`);
      return 0;
    }
    case 'cancel': {
      const id = await resolveMissionId(target, one('mission id'));
      await restJson(target, 'POST', `/v1/missions/${encodeURIComponent(id)}/cancel`, values.reason ? { reason: values.reason } : {});
      out(`mission ${id}: cancel requested\n`);
      return 0;
    }
    default:
      throw new AivyxError('Config', `unknown mission command "${sub ?? ''}"`, { hint: MISSION_USAGE });
  }
}
