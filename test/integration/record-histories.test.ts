/**
 * Records fresh histories into test/histories/ when AIVYX_RECORD_HISTORIES=1
 * (run once after an intentional workflow change that is guarded by `patched()`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startHarness, type Harness } from '../support/turn-harness.js';

describe.runIf(process.env.AIVYX_RECORD_HISTORIES === '1')('record histories', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      script: { rules: [{ match: 'denied', steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['id'] } }] }, { say: '{{results}}' }] }, { steps: [{ call: [{ tool: 'fs.read', input: { path: '/etc/hostname' } }, { tool: 'shell.exec', input: { argv: ['true'] } }] }, { say: 'done: {{results}}' }] }] },
    });
  });
  afterAll(async () => h?.stop());

  it('records a tool turn, a denied turn and their session', async () => {
    const sessionId = 'recorded-session';
    const a = await h.turn('read and run', { sessionId, messageId: 'm1' });
    const b = await h.turn('this is denied', { sessionId, messageId: 'm2', tier: 'SemiTrusted' });
    const save = async (workflowId: string, name: string) => {
      const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
      writeFileSync(join(import.meta.dirname, '../histories', `${name}.json`), historyToJSON(history));
    };
    await save(a.turnId, 'turn-tools');
    await save(b.turnId, 'turn-denied');
  });
});
