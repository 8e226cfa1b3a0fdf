/**
 * The REST channel's mission routes against a real worker: a mission body validated field by
 * field (a bad duration is a 400 that starts nothing, not a mission whose workflow task fails
 * forever), 404 for a mission or gate that does not exist, 409 for a gate already decided; and a REST
 * client whose message asked for a confirm-first call gets the approved call's result.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { sendMessage, turnEvents } from '../../channels/cli/rest-client.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { closeTestConnection, testConnection, type TestConnection } from '../support/temporal.js';

let tc: TestConnection;
let mh: MissionHarness;
let rest: Awaited<ReturnType<typeof startRestServer>>;
const token = randomBytes(16).toString('hex');

beforeAll(async () => {
  tc = await testConnection();
  mh = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    {
      script: {
        rules: [
          {
            match: 'deploy',
            steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] }, { say: 'done: {{results}}' }],
          },
          { steps: [{ say: 'ok' }] },
        ],
      },
      confirmWith: tc.client,
    },
  );
  const gateway = new TurnGateway({ client: tc.client, taskQueue: mh.taskQueue, attestor: mh.attestor, hub: mh.hub });
  const missions = new MissionGateway({
    client: tc.client,
    taskQueue: mh.taskQueue,
    attestor: mh.attestor,
    capabilities: ['shell.exec', 'llm.call'],
  });
  rest = await startRestServer({ gateway, token, missions, audit: { verify: async () => null, tail: async () => [] } });
});
afterAll(async () => {
  await rest?.stop();
  await mh?.stop();
  await closeTestConnection();
});

async function call(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<{ status: number; json: { error?: { kind: string; message: string } } & Record<string, unknown> }> {
  const res = await fetch(`${rest.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as never };
}

async function missionsStartedSince(since: Date): Promise<string[]> {
  const ids: string[] = [];
  for await (const wf of tc.client.workflow.list({
    query: `WorkflowType = 'missionWorkflow' AND TaskQueue = '${mh.taskQueue}' AND StartTime >= '${since.toISOString()}'`,
  }))
    ids.push(wf.workflowId);
  return ids;
}

describe('POST /v1/missions validates its body', () => {
  it('refuses a bad duration, a missing goal, an unknown field, a bad onExpire or approver with 400 naming the field, and starts nothing', async () => {
    const since = new Date(Date.now() - 1_000);
    const cases: Array<[unknown, RegExp]> = [
      [{ steps: ['x'], reminderAfter: 'soon' }, /field "goal".*field "reminderAfter": must be a duration such as 90s, 24h or 3d/],
      [{ goal: 'g', expireAfter: -5 }, /field "expireAfter"/],
      [{ goal: 'g', escalateAfter: '3 days' }, /field "escalateAfter"/],
      [{ goal: 'g', onExpire: 'later' }, /field "onExpire"/],
      [{ goal: 'g', approvers: ['has space'] }, /field "approvers".*not an approver/],
      [{ goal: 'g', steps: ['ok', ''] }, /field "steps\.1"/],
      [{ goal: 'g', reminderAfer: '1h' }, /unknown field "reminderAfer"/],
      [{ goal: 'g', plan: true, steps: ['x'] }, /field "plan": give "steps" or "plan": true, not both/],
      [{ goal: 'g', steps: [{ waitFor: { email: { from: 'bob' } }, within: '1d' }] }, /field "steps\.0\.waitFor\.email\.from"/],
      [['not', 'an', 'object'], /invalid mission/],
    ];
    for (const [body, message] of cases) {
      const r = await call('POST', '/v1/missions', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error?.message, JSON.stringify(body)).toMatch(message);
    }
    // Visibility is eventually consistent: give a wrongly started mission time to show up.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await missionsStartedSince(since)).toEqual([]);
  });

  it('accepts durations as text or milliseconds (and the listing above would have seen a started mission)', async () => {
    const since = new Date(Date.now() - 1_000);
    const r = await call('POST', '/v1/missions', { goal: 'say ok', reminderAfter: '1h', expireAfter: 86_400_000, onExpire: 'skip-step' });
    expect(r.status).toBe(201);
    expect(r.json.missionId).toMatch(/^mission-/);
    for (const end = Date.now() + 20_000; !(await missionsStartedSince(since)).includes(String(r.json.missionId));) {
      if (Date.now() > end) throw new Error('a started mission never showed in the listing');
      await new Promise((res) => setTimeout(res, 250));
    }
  });
});

describe('missions and gates that do not exist', () => {
  const unknown = `mission-${randomUUID()}`;

  it('a recurring mission: 201 with its schedule id; pause, resume and delete its schedule; a bad schedule or step is a 400 that creates nothing', async () => {
    const bad = await call('POST', '/v1/missions', { goal: 'g', steps: [{ wait: 'soon' }], schedule: { cron: 'mondays' } });
    expect(bad.status).toBe(400);
    expect(bad.json.error?.message).toMatch(
      /field "steps\.0\.wait": must be a duration.*field "schedule\.cron": must be a 5-field cron expression/,
    );
    const r = await call('POST', '/v1/missions', {
      goal: 'weekly digest',
      steps: [{ notify: 'digest' }],
      schedule: { cron: '0 8 * * MON', timeZone: 'Europe/Berlin', paused: true },
    });
    expect(r.status).toBe(201);
    const scheduleId = r.json.scheduleId as string;
    expect(scheduleId).toMatch(/^mission-[0-9a-f-]{36}$/);
    const desc = await tc.client.schedule.getHandle(scheduleId).describe();
    expect(desc.spec.timezone).toBe('Europe/Berlin');
    expect(desc.state.paused).toBe(true);
    expect((await call('POST', `/v1/schedules/${scheduleId}/resume`, {})).json).toEqual({ scheduleId, state: 'active' });
    expect((await tc.client.schedule.getHandle(scheduleId).describe()).state.paused).toBe(false);
    // The schedule list is visibility (eventually consistent): a new schedule shows up within seconds.
    let listed: { scheduleId: string; paused: boolean; next: string[] }[] = [];
    for (let i = 0; i < 100 && !listed.some((s) => s.scheduleId === scheduleId && !s.paused); i++) {
      listed = (await call('GET', '/v1/schedules')).json as unknown as typeof listed;
      await new Promise((r) => setTimeout(r, 200));
    }
    const row = listed.find((s) => s.scheduleId === scheduleId);
    expect(row?.paused).toBe(false);
    // Monday 08:00 in Berlin is 06:00 or 07:00 UTC.
    expect(row?.next[0]).toMatch(/T0[67]:00:00\.000Z$/);
    expect(new Date(row!.next[0]!).getUTCDay()).toBe(1);
    expect((await call('POST', `/v1/schedules/${scheduleId}/pause`, {})).json).toEqual({ scheduleId, state: 'paused' });
    expect((await call('DELETE', `/v1/schedules/${scheduleId}`)).json).toEqual({ scheduleId, state: 'deleted' });
    await expect(tc.client.schedule.getHandle(scheduleId).describe()).rejects.toThrow();
  });

  it('404 for an unknown mission on show, cancel and a gate decision', async () => {
    const show = await call('GET', `/v1/missions/${unknown}`);
    expect(show.status).toBe(404);
    expect(show.json.error).toMatchObject({ kind: 'NotFound', message: `no mission ${unknown}` });
    expect((await call('POST', `/v1/missions/${unknown}/cancel`, {})).status).toBe(404);
    const approve = await call('POST', '/v1/gates/approve', { gateId: `${unknown}/gate-1` });
    expect(approve.status).toBe(404);
    expect(approve.json.error).toMatchObject({ kind: 'NotFound', message: `no mission ${unknown}` });
    expect((await call('POST', '/v1/gates/deny', { gateId: `${unknown}/gate-1`, reason: 'no' })).status).toBe(404);
  });

  it('404 for a gate the mission never opened, 409 for a gate already decided; 400 for a malformed id', async () => {
    const created = await call('POST', '/v1/missions', { goal: 'deploy it', steps: ['deploy the build'] });
    const missionId = String(created.json.missionId);
    const gateId = `${missionId}/gate-1`;
    // The step's shell.exec is confirm-first: the mission waits at its first gate.
    for (const end = Date.now() + 60_000; ;) {
      const shown = await call('GET', `/v1/missions/${missionId}`);
      if ((shown.json.gate as { state?: string } | undefined)?.state === 'open') break;
      if (Date.now() > end) throw new Error(`mission never reached its gate: ${JSON.stringify(shown.json)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const never = await call('POST', '/v1/gates/approve', { gateId: `${missionId}/gate-7` });
    expect(never.status).toBe(404);
    expect(never.json.error?.message).toMatch(/has no gate/);
    expect((await call('POST', '/v1/gates/approve', { gateId })).status).toBe(200);
    const twice = await call('POST', '/v1/gates/deny', { gateId, reason: 'changed my mind' });
    expect(twice.status).toBe(409);
    expect(twice.json.error?.message).toMatch(/a gate decides once/);
    // Once the mission has ended: still 409 (it exists), never 404.
    for (const end = Date.now() + 60_000; (await call('GET', `/v1/missions/${missionId}`)).json.status !== 'COMPLETED';) {
      if (Date.now() > end) throw new Error('the approved mission never completed');
      await new Promise((r) => setTimeout(r, 250));
    }
    const ended = await call('POST', '/v1/gates/approve', { gateId });
    expect(ended.status).toBe(409);
    expect(ended.json.error?.message).toMatch(/has ended/);
    expect((await call('POST', `/v1/missions/${missionId}/cancel`, {})).status).toBe(409);
    expect((await call('GET', '/v1/missions/not-a-mission')).status).toBe(400);
    expect((await call('POST', '/v1/gates/approve', { gateId: 'nonsense' })).status).toBe(400);
  });
});

describe("a REST client that asked receives the approved call's result", () => {
  it('the escalated stream names the gate and the turn that will run the call; after approval that turn streams the result', async () => {
    const target = { url: rest.url, token };
    const heard: { event: string; data: Record<string, unknown> }[] = [];
    for await (const e of sendMessage(target, { text: 'deploy now', sessionId: `rest-${randomUUID()}` }))
      heard.push(e as { event: string; data: Record<string, unknown> });
    const outcome = heard.find((e) => e.event === 'outcome')?.data;
    expect(outcome).toMatchObject({ status: 'Escalated', pendingTool: 'shell.exec' });
    const status = heard.map((e) => (e.event === 'status' ? String(e.data.text) : '')).join('\n');
    const m = /approval needed: gate (\S+) .*once approved, the call runs as turn (\S+)/.exec(status);
    expect(m, status).not.toBeNull();
    const [, gateId, rerun] = m!;

    // The gate opens as the mission starts, moments after the outcome: wait until it is shown open.
    const missionId = gateId!.slice(0, gateId!.lastIndexOf('/'));
    for (let i = 0; i < 100; i++) {
      const shown = await call('GET', `/v1/missions/${missionId}`);
      if ((shown.json.gate as { state?: string } | undefined)?.state === 'open') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const decided = await call('POST', '/v1/gates/approve', { gateId });
    expect(decided.status, JSON.stringify(decided.json)).toBe(200);
    let result: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !result; i++) {
      try {
        for await (const e of turnEvents(target, rerun!)) if (e.event === 'outcome') result = e.data as Record<string, unknown>;
      } catch {
        await new Promise((r) => setTimeout(r, 200)); // the re-run has not started yet
      }
    }
    expect(result).toMatchObject({ status: 'Completed', finalMessage: 'done: shell.exec: Completed (Unverified)' });
  }, 120_000);
});
