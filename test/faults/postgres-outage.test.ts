/**
 * Faults lose nothing (seed D1 commitment 5: "if the process crashes mid-turn, the audit log still
 * tells the truth about what got executed"). A real PostgreSQL of the test's own is stopped the
 * hard way for seconds at scripted moments — before a tool's effect, during it, after it (while the
 * turn finalizes) and during an approval — under a real worker on the dev server. After recovery
 * every effect happened exactly once, has exactly one `ToolCall` entry, and `audit verify` with the
 * reconciliation of tool calls and intents passes.
 *
 * Before the tool-call log (`tool_calls`, `recordToolCall`), the "during the effect" case lost the
 * entry: the first attempt's bookkeeping threw ECONNREFUSED after the effect and the retries ran out
 * before the database came back, so the turn completed with no ToolCall entry.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedDecision, signedMissionArgs } from '../../channels/mission-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { verifyAuditLog } from '../../infra/tool-call-log.js';
import {
  approveGateUpdate,
  missionStatusQuery,
  type MissionDefinition,
  type missionWorkflow,
} from '../../workflows/mission/mission-workflow.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { startScratchPostgres, type ScratchPostgres } from '../support/scratch-postgres.js';
import { testConnection } from '../support/temporal.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-faults-'));
const lines = (file: string): number => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` is true (or fails the test after `ms`). */
async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition never held');
    await sleep(50);
  }
}

// The model: (slow?) step → shell.exec appending a line to a file then sleeping → (slow?) final answer.
const script = {
  rules: [
    {
      regex: 'before (\\S+)',
      steps: [
        { delayMs: 2500, call: [{ tool: 'shell.exec', input: { argv: ['sh', '-c', 'echo ran >> "$0"', '{{match.1}}'] } }] },
        { say: 'done: {{results}}' },
      ],
    },
    {
      regex: 'during (\\S+)',
      steps: [
        { call: [{ tool: 'shell.exec', input: { argv: ['sh', '-c', 'echo ran >> "$0"; sleep 2', '{{match.1}}'] } }] },
        { say: 'done: {{results}}' },
      ],
    },
    {
      regex: 'after (\\S+)',
      steps: [
        { call: [{ tool: 'shell.exec', input: { argv: ['sh', '-c', 'echo ran >> "$0"', '{{match.1}}'] } }] },
        { delayMs: 2500, say: 'done: {{results}}' },
      ],
    },
    {
      regex: 'approve (\\S+)',
      steps: [
        { call: [{ tool: 'shell.exec', input: { argv: ['sh', '-c', 'echo ran >> "$0"', '{{match.1}}'] } }] },
        { say: 'done: {{results}}' },
      ],
    },
  ],
};

let pg: ScratchPostgres;
let h: Harness;

beforeAll(async () => {
  pg = await startScratchPostgres();
  h = await startHarness({ script, databaseUrl: pg.url, agent: { capabilities: ['shell.exec', 'llm.call'], confirmFirst: [] } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  pg?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const toolCalls = (evs: AuditEvent[]) => evs.filter((e) => e.type === 'ToolCall');

/** Runs a turn while `fault` runs alongside it; checks the effect ran once and is audited once. */
async function turnThrough(text: string, file: string, fault: () => Promise<void>): Promise<void> {
  const [{ turnId, outcome }] = await Promise.all([h.turn(text), fault()]);
  expect(outcome).toMatchObject({ status: 'Completed', toolCallsMade: 1 });
  expect(lines(file), 'the effect ran exactly once').toBe(1);
  const audit = await h.audit(turnId);
  expect(toolCalls(audit)).toEqual([expect.objectContaining({ toolId: 'shell.exec', outcome: 'Completed(Unverified)' })]);
  expect(audit.filter((e) => e.type === 'TurnEnded')).toEqual([expect.objectContaining({ toolCallsMade: 1 })]);
  const report = await verifyAuditLog(h.db, h.master.subkey('audit'));
  expect(report.reconciliation.findings).toEqual([]);
  expect(report.ok).toBe(true);
}

describe('PostgreSQL stopped for seconds at scripted moments of a turn', () => {
  it('during the effect (the tool finishes while the database is down): the entry is written once it is back', async () => {
    const file = join(dir, 'during');
    await turnThrough(`during ${file}`, file, async () => {
      await until(() => lines(file) > 0);
      await pg.outage(6000);
    });
  }, 120_000);

  it('before the effect (down when the call is scheduled): the call waits, then runs once', async () => {
    const file = join(dir, 'before');
    await turnThrough(`before ${file}`, file, async () => {
      await sleep(1000); // inside the slow model step, after it loaded the session history
      await pg.outage(5000);
    });
  }, 120_000);

  it('after the effect, while the turn finalizes: TurnEnded waits for the database; nothing runs twice', async () => {
    const file = join(dir, 'after');
    await turnThrough(`after ${file}`, file, async () => {
      await until(() => lines(file) > 0);
      await sleep(500); // in the slow final step
      await pg.outage(4000);
    });
  }, 120_000);
});

describe('PostgreSQL stopped during an approval', () => {
  let m: MissionHarness;
  let mpg: ScratchPostgres;
  beforeAll(async () => {
    mpg = await startScratchPostgres();
    const tc = await testConnection();
    m = await startMissionHarness(
      { nativeConnection: tc.connection, namespace: tc.namespace },
      {
        script,
        databaseUrl: mpg.url,
        agent: { capabilities: ['shell.exec', 'llm.call'], confirmFirst: ['shell.exec'] },
        codec: { connection: tc.client.connection },
      },
    );
  }, 120_000);
  afterAll(async () => {
    await m?.stop();
    mpg?.destroy();
  });

  it('the decision is verified once the database is back; the approved call runs once and is audited once', async () => {
    const file = join(dir, 'approval');
    const def: MissionDefinition = {
      missionId: `mission-${randomUUID()}`,
      goal: 'append a line',
      steps: [{ text: `approve ${file}` }],
      approvers: [{ identity: 'local-user', channel: 'cli' }],
      onExpire: 'fail',
      capabilities: ['shell.exec'],
      channel: { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: `s-${randomUUID()}`, sender: 'local-user' },
    };
    const client = m.client!;
    const handle = await client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
      workflowId: def.missionId,
      taskQueue: m.taskQueue,
      args: [signedMissionArgs(m.attestor, def)],
    });
    let gateId: string | undefined;
    while (!gateId) {
      const s = await handle.query(missionStatusQuery);
      if (s.gate?.state === 'open') gateId = s.gate.gateId;
      else await sleep(100);
    }
    mpg.stop();
    const decided = handle.executeUpdate(approveGateUpdate, {
      args: [signedDecision(m.attestor, 'approve', gateId, { identity: 'local-user', channel: 'cli', trustTier: 'Trusted' })],
    });
    await sleep(5000);
    expect(lines(file), 'nothing ran while the decision could not be verified').toBe(0);
    await mpg.start();
    expect(await decided).toEqual({ gateId, state: 'approved' });
    expect(await handle.result()).toMatchObject({ state: 'completed' });
    expect(lines(file)).toBe(1);
    expect((await m.audit(def.missionId)).filter((e) => e.type === 'GateApproved')).toHaveLength(1);
    expect(toolCalls(await m.audit(`${def.missionId}/step-0/run-2`))).toEqual([
      expect.objectContaining({ outcome: 'Completed(Unverified)' }),
    ]);
    const report = await verifyAuditLog(m.db, m.master.subkey('audit'));
    expect(report.reconciliation.findings).toEqual([]);
    expect(report.ok).toBe(true);
  }, 120_000);
});
