/**
 * Recurring missions on a real Temporal Schedule (issue 12), on the shared dev server: five weeks of
 * a weekly schedule (backfilled) are five missions and five notices, with a worker restart among
 * them and no run twice; a copied template started by hand under a made-up run id runs nothing, nor
 * does a schedule re-created under the deleted one's id carrying that template; a
 * malformed schedule is refused before any schedule exists.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduledRunMissionId } from '../../activities/mission-activities.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { createInbox } from '../../infra/inbox.js';
import { SealedStorage } from '../../infra/storage/index.js';
import type { ScheduledMissionArgs } from '../../workflows/mission-messages.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';

let tc: TestConnection;
let mh: MissionHarness;
let gateway: MissionGateway;
const WEEK = 7 * 86_400_000;

beforeAll(async () => {
  tc = await testConnection();
  mh = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    { script: { rules: [{ steps: [{ say: 'step done' }] }] }, confirmWith: tc.client, scheduleSkewMs: 3_000 },
  );
  gateway = new MissionGateway({ client: tc.client, taskQueue: mh.taskQueue, attestor: mh.attestor, capabilities: [] });
}, 120_000);
afterAll(async () => mh?.stop());

/** The workflow ids the schedule has started so far, once there are `n`. */
async function runsOf(scheduleId: string, n: number): Promise<string[]> {
  for (let i = 0; i < 600; i++) {
    const { info } = await tc.client.schedule.getHandle(scheduleId).describe();
    const ids = info.recentActions.map((a) => a.action.workflow.workflowId);
    if (ids.length >= n) return ids;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`schedule ${scheduleId} never started ${n} runs`);
}

const inbox = () => createInbox(SealedStorage.open(mh.db, mh.master).domain('sessions'));

describe('recurring missions', () => {
  it('a weekly schedule over five weeks: five missions, five notices, none twice across a worker restart; a copied template runs nothing', async () => {
    const { scheduleId } = await gateway.schedule({
      goal: 'weekly summary',
      steps: [{ notify: 'Monday: here is what waits for you' }],
      schedule: { every: '7d', paused: true },
    });
    const schedule = tc.client.schedule.getHandle(scheduleId);
    const now = Date.now();
    // Five weekly fire times in the window, all due now.
    await schedule.backfill({ start: new Date(now - 5 * WEEK + 3_600_000), end: new Date(now), overlap: 'ALLOW_ALL' });
    const first = await runsOf(scheduleId, 1);
    await mh.restartWorker();
    const runs = await runsOf(scheduleId, 5);
    expect(new Set(runs).size).toBe(5);
    expect(first.every((id) => runs.includes(id))).toBe(true);
    for (const id of runs) expect(await tc.client.workflow.getHandle(id).result()).toMatchObject({ state: 'completed', stepsRun: 1 });

    const missions = runs.map((id) => scheduledRunMissionId(scheduleId, id));
    for (const m of missions) {
      const audit = (await mh.audit(m)).map((e) => e.type);
      expect(audit).toEqual(['MissionStarted', 'MissionStepFinished', 'MissionEnded']);
    }
    const notices = (await inbox().list()).filter((r) => r.turnId.startsWith(scheduleId));
    expect(notices).toHaveLength(5);
    expect(new Set(notices.map((r) => r.turnId))).toEqual(new Set(missions.map((m) => `${m}/step-0/notice`)));
    expect(notices.every((r) => r.outcome.status === 'Completed' && r.outcome.finalMessage === 'Monday: here is what waits for you')).toBe(
      true,
    );

    // The attacker copies a run's arguments (template + proof) out of history and starts one more run.
    const history = await tc.client.workflow.getHandle(runs[0]!).fetchHistory();
    const payload = history.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
    const copied = defaultPayloadConverter.fromPayload<ScheduledMissionArgs>(payload);
    const forged = await tc.client.workflow.start('scheduledMissionWorkflow', {
      workflowId: `${scheduleId}-2020-01-06T00:00:00Z`,
      taskQueue: mh.taskQueue,
      args: [copied],
    });
    await expect(forged.result()).rejects.toThrow();
    const failure = await forged.result().catch((e: { cause?: Error }) => e.cause?.message);
    expect(failure).toMatch(/did not start .* \(a copied template runs nothing\)/);
    expect((await inbox().list()).filter((r) => r.turnId.startsWith(scheduleId))).toHaveLength(5);
    expect(await mh.audit(scheduledRunMissionId(scheduleId, `${scheduleId}-2020-01-06T00:00:00Z`))).toEqual([]);

    // Deleted by the owner; later the attacker re-creates a schedule of that id carrying the copied template.
    await gateway.scheduleAction(scheduleId, 'delete');
    await new Promise((r) => setTimeout(r, 3_500));
    const revived = await tc.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '7d' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledMissionWorkflow',
        workflowId: scheduleId,
        taskQueue: mh.taskQueue,
        args: [copied],
      },
      state: { paused: true },
    });
    await revived.trigger();
    const [revivedRun] = (await runsOf(scheduleId, 1)).slice(-1);
    const refused = await tc.client.workflow
      .getHandle(revivedRun!)
      .result()
      .catch((e: { cause?: Error }) => e.cause?.message);
    expect(refused).toMatch(/not when its template was signed \(a re-created schedule runs nothing\)/);
    expect((await inbox().list()).filter((r) => r.turnId.startsWith(scheduleId))).toHaveLength(5);
    await revived.delete();
  }, 180_000);

  it('a malformed schedule is refused before any schedule exists', async () => {
    const refused = async (schedule: unknown) =>
      gateway.schedule({ goal: 'g', steps: [{ notify: 'x' }], schedule } as never).then(
        () => 'accepted',
        (e: Error) => e.message,
      );
    expect(await refused({ every: 'soon' })).toMatch(/"schedule\.every": must be a duration such as 90s/);
    expect(await refused({ cron: 'every monday' })).toMatch(/"schedule\.cron": must be a 5-field cron expression/);
    expect(await refused({ every: '7d', cron: '0 8 * * MON' })).toMatch(/"schedule": needs exactly one of "every"/);
    expect(await refused({ cron: '0 8 * * MON', timeZone: 'Mars/Base' })).toMatch(/unknown time zone "Mars\/Base"/);
    expect(await refused({ every: '10s' })).toMatch(/"schedule\.every": must be at least 1m/);
  });
});
