/**
 * Must-show 5: the worker is SIGKILLed mid-turn and a new one started; the turn completes,
 * the audit chain verifies, and no ToolCall entry is duplicated.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, inject } from 'vitest';
import { awaitTurnOutcome, buildTurnRequest, submitTurn } from '../../channels/turn-client.js';
import { Client } from '@temporalio/client';
import { createAttestor } from '../../infra/attestation.js';
import { aivyxDataConverter, createPayloadCodec } from '../../infra/codec/index.js';
import { auditEntriesForTurn, verifyAuditChain } from '../../infra/audit/index.js';
import { openDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { textContent } from '../../core/message.js';
import type { Kysely } from 'kysely';
import type { TurnOutcome } from '../../core/outcomes.js';
import type { Database } from '../../infra/db/index.js';
import type { MasterKey } from '../../infra/crypto/index.js';
import { createTestDatabase } from '../support/postgres.js';
import { testConnection, uniqueTaskQueue } from '../support/temporal.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';
import { startWorkerProcess } from '../support/worker-child.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-crash-'));
const target = join(dir, 'out.txt');
const delegated = join(dir, 'delegated.txt');
const scriptFile = join(dir, 'script.json');
writeFileSync(
  scriptFile,
  JSON.stringify({
    rules: [
      // A lead whose writer specialist is mid-turn when the worker dies.
      {
        match: 'ask the writer',
        steps: [
          { call: [{ tool: 'agent.delegate', input: { specialist: 'writer', task: 'write it down' } }] },
          { say: 'lead: {{results}}' },
        ],
      },
      {
        match: 'write it down',
        steps: [
          { call: [{ tool: 'fs.write', input: { path: delegated, content: 'written once' } }] },
          { say: 'writer: {{result.0.status}}', delayMs: 6000 },
        ],
      },
      {
        steps: [
          { call: [{ tool: 'fs.write', input: { path: target, content: 'survived' } }] },
          { say: 'after the crash: {{result.0.status}}', delayMs: 6000 },
        ],
      },
    ],
  }),
);

let pg: Awaited<ReturnType<typeof createTestDatabase>>;
const children: ChildProcess[] = [];

async function startWorker(taskQueue: string): Promise<ChildProcess> {
  const child = await startWorkerProcess({
    DATABASE_URL: pg.url,
    AIVYX_TEST_TEMPORAL_ADDRESS: inject('temporalAddress'),
    AIVYX_TASK_QUEUE: taskQueue,
    AIVYX_SCRIPT: scriptFile,
    AIVYX_SPECIALISTS: JSON.stringify([{ name: 'writer', instructions: 'Write.', capabilities: [`fs.write:${dir}/**`] }]),
  });
  children.push(child);
  return child;
}

beforeAll(async () => {
  pg = await createTestDatabase('crash');
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await pg?.drop();
});

/** Submits `text` as a turn, SIGKILLs the worker once `watched(turnId)` has a ToolCall entry, starts another, and awaits the outcome. */
async function crashMidTurn(
  db: Kysely<Database>,
  master: MasterKey,
  text: string,
  watched: (turnId: string) => string = (id) => id,
): Promise<{ turnWorkflowId: string; outcome: TurnOutcome }> {
  const shared = await testConnection();
  const client = new Client({
    connection: shared.client.connection,
    dataConverter: aivyxDataConverter(createPayloadCodec(master.subkey('payload'))),
  });
  const taskQueue = uniqueTaskQueue('crash');
  const first = await startWorker(taskQueue);
  const channel = { name: 'test', platform: 'Local' as const, trustTier: 'Trusted' as const, sessionId: `s-${randomUUID()}`, sender: 't' };
  const req = buildTurnRequest(channel, {
    id: randomUUID(),
    sessionId: channel.sessionId,
    content: textContent(text),
    receivedAt: Date.now(),
  });
  const { turnWorkflowId } = await submitTurn({ client, taskQueue, attestor: createAttestor(master.subkey('attestation')) }, req);

  // Wait until the tool has run and been audited, then kill the worker during the slow LLM step.
  for (let i = 0; i < 200; i++) {
    const rows = await auditEntriesForTurn(db, watched(turnWorkflowId));
    if (rows.some((r) => r.event.type === 'ToolCall')) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 500));
  first.kill('SIGKILL');
  await new Promise((r) => first.once('exit', r));
  await startWorker(taskQueue);
  return { turnWorkflowId, outcome: await awaitTurnOutcome(client, turnWorkflowId) };
}

it('survives a SIGKILLed worker mid-turn without duplicating audit entries', async () => {
  const { db, close } = await openDatabase({ databaseUrl: pg.url });
  try {
    const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
    const { turnWorkflowId, outcome } = await crashMidTurn(db, master, 'write then think');
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'after the crash: Completed', toolCallsMade: 1 });
    expect(readFileSync(target, 'utf8')).toBe('survived');
    const events = (await auditEntriesForTurn(db, turnWorkflowId)).map((r) => r.event.type);
    expect(events).toEqual(['TurnStarted', 'ToolCall', 'TurnEnded']);
    expect(await verifyAuditChain(db, master.subkey('audit'))).toMatchObject({ ok: true });
  } finally {
    await close();
  }
}, 120_000);

it('a worker killed mid-specialist resumes it: the lead completes and no call runs twice', async () => {
  const { db, close } = await openDatabase({ databaseUrl: pg.url });
  try {
    const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
    const child = (lead: string) => `${lead}/tool-0-0/writer`;
    const { turnWorkflowId, outcome } = await crashMidTurn(db, master, 'ask the writer', child);
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'lead: agent.delegate: Completed (NotApplicable)' });
    expect(readFileSync(delegated, 'utf8')).toBe('written once');
    const types = async (id: string) => (await auditEntriesForTurn(db, id)).map((r) => r.event.type);
    expect(await types(turnWorkflowId)).toEqual(['TurnStarted', 'ToolCall', 'TurnEnded']);
    expect(await types(child(turnWorkflowId))).toEqual(['TurnStarted', 'ToolCall', 'TurnEnded']);
    expect(await verifyAuditChain(db, master.subkey('audit'))).toMatchObject({ ok: true });
  } finally {
    await close();
  }
}, 120_000);
