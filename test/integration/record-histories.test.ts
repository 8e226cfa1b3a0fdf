/**
 * Records fresh histories into test/histories/ when AIVYX_RECORD_HISTORIES=1
 * (run once after an intentional workflow change that is guarded by `patched()`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { findTemporalCli } from '../../infra/temporal/index.js';
import { testTemporalAddress } from '../support/temporal.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

describe.runIf(process.env.AIVYX_RECORD_HISTORIES === '1')('record histories', () => {
  let h: Harness;
  beforeAll(async () => {
    // Recorded in plaintext so the replay test needs no key (the codec does not change command order).
    h = await startHarness({
      codec: false,
      script: { rules: [{ match: 'denied', steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['id'] } }] }, { say: '{{results}}' }] }, { steps: [{ call: [{ tool: 'fs.read', input: { path: '/etc/hostname' } }, { tool: 'shell.exec', input: { argv: ['true'] } }] }, { say: 'done: {{results}}' }] }] },
    });
  });
  afterAll(async () => h?.stop());

  it('records a tool turn, a denied turn and their session', async () => {
    const sessionId = 'recorded-session';
    const a = await h.turn('read and run', { sessionId, messageId: 'm1' });
    const b = await h.turn('this is denied', { sessionId, messageId: 'm2', tier: 'SemiTrusted' });
    // The CLI writes the same JSON the UI downloads (historyToJSON trips over vitest's module loading).
    const cli = findTemporalCli({ env: process.env, projectRoot: join(import.meta.dirname, '../..') });
    const save = (workflowId: string, name: string) => {
      const json = execFileSync(cli, ['workflow', 'show', '--workflow-id', workflowId, '--address', testTemporalAddress(), '--output', 'json'], { encoding: 'utf8' });
      writeFileSync(join(import.meta.dirname, '../histories', `${name}.json`), json);
    };
    save(a.turnId, 'turn-tools');
    save(b.turnId, 'turn-denied');
  });
});
