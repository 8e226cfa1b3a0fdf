/**
 * `aivyx mission …`: missions through the REST channel of a running `aivyx up` (or a stack
 * started for the command). Approvals are by `local-user` on the `cli` channel, tier Trusted.
 *
 *   mission create --goal TEXT [--step TEXT … | --plan] [--notify TEXT] [--every D | --cron C [--time-zone TZ]] [--approver IDENTITY …] | <file.json>
 *   mission pause|resume|delete <schedule id>   a recurring mission's schedule
 *   mission list [--state S] [--json]
 *   mission show <id> [--json]
 *   mission approve <gate> [--mission ID] [--reason R]
 *   mission deny <gate> [--mission ID] [--reason R]
 *   mission cancel <id> [--reason R]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import { describeSpendAgainst } from '../../core/spend.js';
import type { MissionSummary, ScheduleRow } from '../ports.js';
import type { MissionStatus } from '../../workflows/mission-messages.js';
import { restJson, type RestTarget } from './rest-client.js';

export const MISSION_USAGE = `  aivyx mission create --goal TEXT [--step TEXT ...] [--notify TEXT] [--approver ID]   start a mission (or: mission create FILE.json)
      [--plan]   … from the goal alone: the assistant plans the steps, you approve the plan first
      [--every 7d | --cron "0 8 * * MON" [--time-zone Europe/Berlin]]   … as a recurring mission (each run a mission)
  aivyx mission schedules [--json]              the recurring missions: paused or not, next runs, last run
  aivyx mission pause|resume|delete SCHEDULE    pause, resume or delete a recurring mission's schedule
  aivyx mission list [--state S] [--json]       missions, by dashboard state (running, waiting, completed, …)
  aivyx mission show ID [--json]                a mission's state, step and open gate
  aivyx mission approve GATE [--mission ID] [--reason R]   approve a gate as local-user
  aivyx mission deny GATE [--mission ID] [--reason R]      deny a gate as local-user
  aivyx mission cancel ID [--reason R]          cancel a mission (an open gate is withdrawn)`;

/** Runs one `mission` subcommand against `target`; returns the exit code. */
/** A gate as approvers see it: the call as it will run (canonical, secrets redacted), why, and who asked where. */
export function gateLines(gate: NonNullable<MissionStatus['gate']>): string[] {
  return [
    `  gate ${gate.gateId}: ${gate.state} — ${gate.tool} (input ${gate.inputHash.slice(0, 12)}…), approvers ${gate.approvers.map((a) => `${a.identity}@${a.channel}`).join(', ')}`,
    ...(gate.call ?? []).map((l) => `    ${l}`),
    ...(gate.why ? [`    why: ${gate.why}`] : []),
    ...(gate.askedBy ? [`    asked by ${gate.askedBy.identity} on ${gate.askedBy.channel}`] : []),
  ];
}

/**
 * `aivyx approvals`: the gates waiting for the owner (local-user on cli), each with what will run. Deciding
 * goes through `aivyx mission approve|deny`, the same signed path as every channel's approvals.
 */
export async function runApprovalsCommand(target: RestTarget, out: (s: string) => void): Promise<number> {
  const waiting = (await restJson(target, 'GET', '/v1/missions?state=waiting')) as MissionSummary[];
  const lines: string[] = [];
  for (const m of waiting) {
    const s = (await restJson(target, 'GET', `/v1/missions/${encodeURIComponent(m.missionId)}`)) as MissionStatus;
    if (!s.gate || !s.gate.approvers.some((a) => a.identity === 'local-user' && a.channel === 'cli')) continue;
    lines.push(
      `mission ${s.missionId}`,
      ...gateLines(s.gate),
      `  decide: aivyx mission approve ${s.gate.gateId}   (or: deny ${s.gate.gateId} --reason "…")`,
    );
  }
  out(lines.length === 0 ? 'nothing is waiting for your approval\n' : `${lines.join('\n')}\n`);
  return 0;
}

export async function runMissionCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      goal: { type: 'string' },
      step: { type: 'string', multiple: true },
      notify: { type: 'string' },
      plan: { type: 'boolean' },
      every: { type: 'string' },
      cron: { type: 'string' },
      'time-zone': { type: 'string' },
      approver: { type: 'string', multiple: true },
      state: { type: 'string' },
      mission: { type: 'string' },
      reason: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
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
      } else {
        if (!values.goal) throw new AivyxError('Config', 'mission create needs --goal TEXT (or a JSON file)', { hint: MISSION_USAGE });
        const steps = [...(values.step ?? []), ...(values.notify ? [{ notify: values.notify }] : [])];
        const recurring = values.every !== undefined || values.cron !== undefined;
        spec = {
          goal: values.goal,
          ...(steps.length > 0 ? { steps } : {}),
          ...(values.plan ? { plan: true } : {}),
          ...(values.approver ? { approvers: values.approver } : {}),
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
      const id = one('schedule id');
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
      else if (rows.length === 0) out('no missions\n');
      else
        out(
          rows
            .map(
              (r) =>
                `${r.missionId}  ${r.state ?? '?'}${r.openGate ? `  gate ${r.openGate}` : ''}  (${r.status.toLowerCase()}, started ${r.startTime})\n`,
            )
            .join(''),
        );
      return 0;
    }
    case 'show': {
      const id = one('mission id');
      const s = (await restJson(target, 'GET', `/v1/missions/${encodeURIComponent(id)}`)) as MissionStatus & {
        status: string;
        result?: { reason?: string };
      };
      if (values.json) {
        out(`${JSON.stringify(s)}\n`);
        return 0;
      }
      const lines = [`mission ${s.missionId}: ${s.state} (${s.status.toLowerCase()})`, `  step ${s.step + 1}, ${s.stepsRun} step runs`];
      if (s.waiting) lines.push(`  waiting: ${s.waiting}`);
      if (s.spent || s.budget) lines.push(`  spent: ${describeSpendAgainst(s.spent, s.budget)}`);
      if (s.gate) lines.push(...gateLines(s.gate));
      if (s.result?.reason) lines.push(`  reason: ${s.result.reason}`);
      out(`${lines.join('\n')}\n`);
      return 0;
    }
    case 'approve':
    case 'deny': {
      const gateId = one('gate id');
      const r = (await restJson(target, 'POST', `/v1/gates/${sub}`, {
        gateId,
        ...(values.mission ? { missionId: values.mission } : {}),
        ...(values.reason ? { reason: values.reason } : {}),
      })) as { gateId: string; state: string };
      out(`gate ${r.gateId}: ${r.state}\n`);
      return 0;
    }
    case 'cancel': {
      const id = one('mission id');
      await restJson(target, 'POST', `/v1/missions/${encodeURIComponent(id)}/cancel`, values.reason ? { reason: values.reason } : {});
      out(`mission ${id}: cancel requested\n`);
      return 0;
    }
    default:
      throw new AivyxError('Config', `unknown mission command "${sub ?? ''}"`, { hint: MISSION_USAGE });
  }
}
