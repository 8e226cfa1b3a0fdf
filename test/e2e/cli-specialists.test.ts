/**
 * Issue 33 through real processes: `aivyx up` (its own dev server, PGlite) with a scripted model and a
 * configured specialist. A one-shot `aivyx chat -m` asks for three delegations; two answer at once, the
 * third works on; `aivyx specialists` lists it, `aivyx specialists stop <id>` stops it, and the chat's
 * answer says the owner stopped it while the other two answered. The audit log shows `SpecialistStopped`.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { aivyx, aivyxAsync, cliEnv, spawnAivyx, untilAivyx } from '../support/cli-process.js';

const home = mkdtempSync(join(tmpdir(), 'aivyx-cli-specialists-'));
const script = join(home, 'script.json');
const delegate = (task: string) => ({ tool: 'agent.delegate', input: { specialist: 'echo', task } });
writeFileSync(
  script,
  JSON.stringify({
    rules: [
      {
        match: 'ask three',
        steps: [{ call: [delegate('quick 1'), delegate('quick 2'), delegate('slow 3')] }, { say: 'lead: {{results}}' }],
      },
      { regex: '^quick \\d$', steps: [{ say: 'quick answer' }] },
      // Works on until stopped (the test kills the stack afterwards).
      { regex: '^slow \\d$', steps: [{ say: 'too late', delayMs: 600_000 }] },
      { steps: [{ say: 'ok' }] },
    ],
  }),
);
const specialists = JSON.stringify([{ name: 'echo', instructions: 'Answer briefly.', capabilities: ['llm.call'] }]);

let up: ChildProcess | undefined;
afterAll(() => {
  up?.kill('SIGKILL');
});

describe('aivyx specialists', () => {
  it('lists the running specialist and stops it; the lead answers with the others and says the owner stopped it', async () => {
    const env = await cliEnv(home, script, { AIVYX_SPECIALISTS: specialists });
    const started = spawnAivyx(['up'], env);
    up = started.child;
    await started.waitFor('aivyx is up', 180_000);

    const chat = aivyxAsync(['chat', '-m', 'ask three'], env);
    const listed = await untilAivyx(['specialists'], env, (out) => /\/tool-0-2\/echo\n/.test(out), 60_000);
    const child = /^(turn\/\S+\/tool-0-2\/echo)$/m.exec(listed)![1]!;
    expect(listed).toMatch(new RegExp(`${child.replace(/[/.]/g, '\\$&')}\\n  echo for lead turn/cli/\\S+ · `));

    // Not a specialist: its lead is refused, and nothing is cancelled.
    const lead = child.replace(/\/tool-0-2\/echo$/, '');
    const refused = aivyx(['specialists', 'stop', lead], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('is not a running specialist');

    const stop = aivyx(['specialists', 'stop', child], env);
    expect(stop.status, `${stop.stdout}${stop.stderr}`).toBe(0);
    expect(stop.stdout).toContain(`stopped echo (${child})`);

    const answered = await chat;
    expect(answered.stdout).toContain(
      'lead: agent.delegate: Completed (NotApplicable); agent.delegate: Completed (NotApplicable); agent.delegate: Failed (Cancelled: specialist echo was stopped by the owner',
    );
    // Visibility catches up with the stopped child within a moment.
    await untilAivyx(['specialists'], env, (out) => out === 'no specialist is running\n');
    const tail = aivyx(['audit', 'tail', '-n', '50'], env);
    expect(tail.stdout.split('\n').filter((l) => l.includes('SpecialistStopped'))).toHaveLength(1);
  }, 400_000);
});
