/**
 * Missions end to end through real processes: `aivyx up` (dev server + PGlite, shell.exec
 * confirm-first), `aivyx mission create` of a mission whose step calls shell.exec, the mission
 * seen waiting at its gate in `mission list --state waiting` (visibility on AivyxMissionState),
 * `mission approve` as local-user, and `mission show` reporting it completed; then deny and cancel.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { aivyx, cliEnv, spawnAivyx, untilAivyx } from '../support/cli-process.js';

const home = mkdtempSync(join(tmpdir(), 'aivyx-mission-e2e-'));
const script = join(home, 'script.json');
writeFileSync(
  script,
  JSON.stringify({
    rules: [
      {
        match: 'deploy',
        steps: [
          { call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] },
          { say: 'deployed: {{results}}', sayOnFailure: 'not deployed: {{results}}' },
        ],
      },
      { steps: [{ say: 'step done' }] },
    ],
  }),
);

const until = untilAivyx;
const baseEnv = () => cliEnv(home, script, { AIVYX_CONFIRM_FIRST: 'shell.exec' });

let up: ChildProcess | undefined;
afterAll(() => {
  up?.kill('SIGKILL');
});

describe('aivyx mission', () => {
  it('create → waiting at a gate in list --state waiting → approve → completed in show; deny; cancel', async () => {
    const env = await baseEnv();
    const started = spawnAivyx(['up'], env);
    up = started.child;
    await started.waitFor('aivyx is up');

    const created = aivyx(['mission', 'create', '--goal', 'ship the build', '--step', 'prepare', '--step', 'deploy the build'], env);
    expect(created.stderr).toBe('');
    expect(created.status).toBe(0);
    const missionId = created.stdout.trim();
    expect(missionId).toMatch(/^mission-[0-9a-f-]{36}$/);

    const waiting = await until(['mission', 'list', '--state', 'waiting'], env, (s) => s.includes(missionId));
    const gateId = `${missionId}/gate-1`;
    expect(waiting).toContain(`${missionId}  waiting  gate ${gateId}`);

    const shown = aivyx(['mission', 'show', missionId, '--json'], env);
    // The REST JSON behind `show --json` carries what will run, why and who asked; the text form prints it.
    expect(JSON.parse(shown.stdout)).toMatchObject({
      missionId,
      state: 'waiting',
      step: 1,
      gate: {
        gateId,
        state: 'open',
        tool: 'shell.exec',
        approvers: [{ identity: 'local-user', channel: 'cli' }],
        call: ['argv: echo deployed'],
        why: expect.stringMatching(/shell\.exec/) as unknown,
        askedBy: { identity: 'local-user', channel: 'cli' },
      },
    });
    const shownText = aivyx(['mission', 'show', missionId], env).stdout;
    expect(shownText).toContain('    argv: echo deployed');
    expect(shownText).toContain('    asked by local-user on cli');

    // `aivyx approvals` lists it for the owner, with the call as it will run and how to decide it.
    const pending = aivyx(['approvals'], env).stdout;
    expect(pending).toContain(`mission ${missionId}`);
    expect(pending).toContain('    argv: echo deployed');
    // The only gate waiting: `aivyx approve` alone decides it.
    expect(pending).toContain(`decide: aivyx approve   (or: aivyx deny --reason "…")`);

    // A gate id that is not open is refused and changes nothing.
    const wrong = aivyx(['mission', 'approve', `${missionId}/gate-7`], env);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toMatch(/no gate/);

    const approved = aivyx(['mission', 'approve', gateId, '--mission', missionId, '--reason', 'go'], env);
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toContain(`gate ${gateId}: approved`);

    const done = await until(['mission', 'show', missionId], env, (s) => s.includes(': completed\n'));
    expect(done).toContain(`mission ${missionId}: completed`);
    await until(['mission', 'list', '--state', 'completed'], env, (s) => s.includes(missionId));
    expect(aivyx(['mission', 'list', '--state', 'waiting'], env).stdout).not.toContain(missionId);
    expect(aivyx(['approvals'], env).stdout).not.toContain(missionId);

    // The approval is in the audit chain, by local-user on the cli channel.
    const tail = aivyx(['audit', 'tail', '-n', '200', '--json'], env);
    const events = tail.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event: Record<string, unknown> }).event);
    expect(events.find((e) => e.type === 'GateApproved' && e.missionId === missionId)).toMatchObject({
      approver: 'local-user',
      approverChannel: 'cli',
      approverTier: 'Trusted',
      reasonHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(aivyx(['audit', 'verify'], env).stdout).toMatch(/audit chain OK/);

    // Deny ends the mission failed with the reason; cancel withdraws an open gate.
    const denied = aivyx(['mission', 'create', '--goal', 'deploy again'], env).stdout.trim();
    await until(['mission', 'list', '--state', 'waiting'], env, (s) => s.includes(denied));
    expect(aivyx(['mission', 'deny', `${denied}/gate-1`, '--reason', 'not today'], env).stdout).toContain('denied');
    expect(await until(['mission', 'show', denied], env, (s) => s.includes(': failed'))).toContain(
      'reason: gate denied by local-user on cli: not today',
    );
    const cancelled = aivyx(['mission', 'create', '--goal', 'deploy once more'], env).stdout.trim();
    await until(['mission', 'list', '--state', 'waiting'], env, (s) => s.includes(cancelled));
    expect(aivyx(['mission', 'cancel', cancelled], env).status).toBe(0);
    await until(['mission', 'list', '--state', 'cancelled'], env, (s) => s.includes(cancelled));

    // A recurring mission: created with --cron, listed with its next run, paused, deleted.
    const weekly = aivyx(
      ['mission', 'create', '--goal', 'weekly digest', '--notify', 'digest', '--cron', '0 8 * * MON', '--time-zone', 'Europe/Berlin'],
      env,
    );
    expect(weekly.status, weekly.stderr).toBe(0);
    const scheduleId = /^recurring mission (mission-[0-9a-f-]{36})$/.exec(weekly.stdout.trim())?.[1];
    expect(scheduleId, weekly.stdout).toBeDefined();
    await until(['mission', 'schedules'], env, (s) => new RegExp(`${scheduleId}  next \\S+T0[67]:00:00`).test(s));
    expect(aivyx(['mission', 'pause', scheduleId!], env).stdout).toBe(`recurring mission ${scheduleId}: paused\n`);
    await until(['mission', 'schedules'], env, (s) => s.includes(`${scheduleId}  paused`));
    expect(aivyx(['mission', 'delete', scheduleId!], env).stdout).toBe(`recurring mission ${scheduleId}: deleted\n`);
    const badCron = aivyx(['mission', 'create', '--goal', 'g', '--cron', 'mondays'], env);
    expect(badCron.status).not.toBe(0);
    expect(badCron.stderr).toMatch(/schedule\.cron.*must be a 5-field cron expression/);

    up.kill('SIGINT');
    await new Promise((r) => up?.once('exit', r));
  }, 300_000);
});
