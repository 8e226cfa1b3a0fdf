/**
 * Host-bound tools run on their host's queue and nowhere else: with the host's workers down, a turn
 * that reads a file waits — its summary in the UI says for what — and the shared worker, which could
 * run the tool, does not; once a host worker polls, the call runs there, once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wireTurnActivities } from '../../app/wiring.js';
import { createAivyxWorker } from '../../app/worker.js';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { aivyxDataConverter, createPayloadCodec } from '../../infra/codec/index.js';
import { StreamHub } from '../../infra/stream-hub.js';
import { testConnection } from '../support/temporal.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-host-'));
const file = join(dir, 'note.txt');
const hostQueue = `host-${Math.random().toString(36).slice(2, 10)}`;
const script = {
  rules: [
    {
      steps: [
        { call: [{ tool: 'fs.read', input: { path: file } }] },
        { say: 'read {{result.0.output.bytes}} bytes', sayOnFailure: 'failed: {{results}}' },
      ],
    },
  ],
};

describe('a host-bound tool waits for its host', () => {
  let h: Harness;
  beforeAll(async () => {
    writeFileSync(file, 'on the host\n');
    h = await startHarness({ script, agent: { hostQueue } });
  });
  afterAll(() => h?.stop());

  it('says in its summary that it waits for the host, runs nothing elsewhere, and runs once on the host worker', async () => {
    const turn = h.turn('read the note');
    const metadata = async (): Promise<string> => {
      const handles = [];
      for await (const wf of h.client.workflow.list({ query: `WorkflowType = 'turnWorkflow' AND TaskQueue = '${h.taskQueue}'` }))
        handles.push(h.client.workflow.getHandle(wf.workflowId));
      const details = await Promise.all(
        handles.map((x) => x.query<{ currentDetails?: string }>('__temporal_workflow_metadata').then((m) => m.currentDetails ?? '')),
      );
      return details.join('\n');
    };
    // Past the 15 s schedule-to-start notice the summary names the host queue it waits for.
    let details = '';
    for (const end = Date.now() + 45_000; !details.includes(`waiting for host queue ${hostQueue}`);) {
      if (Date.now() > end) throw new Error(`the summary never said so: ${details}`);
      await new Promise((r) => setTimeout(r, 500));
      details = await metadata().catch(() => '');
    }
    // The shared worker has every activity, and still nothing ran.
    const rows = await h.db.selectFrom('tool_calls').selectAll().execute();
    expect(rows).toEqual([]);

    // A worker on the host's queue (activities only) takes the call.
    const { connection, namespace } = await testConnection();
    const hostWorker = await createAivyxWorker({
      connection,
      namespace,
      taskQueue: hostQueue,
      workflows: false,
      activities: wireTurnActivities({
        db: h.db,
        master: h.master,
        hub: new StreamHub(),
        llm: createScriptedProvider(script),
        agent: { capabilities: ['fs.read', 'llm.call'], budgetMs: 60_000, confirmFirst: [], hostQueue, showUntrusted: ['fs.read'] },
      }),
      dataConverter: aivyxDataConverter(createPayloadCodec(h.master.subkey('payload'), { unencrypted: 'refuse' })),
    });
    const running = hostWorker.run();
    try {
      const { outcome, turnId } = await turn;
      expect(outcome.status).toBe('Completed');
      expect(outcome.status === 'Completed' && outcome.finalMessage).toBe('read 12 bytes');
      const calls = (await h.audit(turnId)).filter((e) => e.type === 'ToolCall');
      expect(calls).toHaveLength(1);
    } finally {
      hostWorker.shutdown();
      await running;
    }
  }, 120_000);
});
