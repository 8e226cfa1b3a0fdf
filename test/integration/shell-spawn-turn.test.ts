/**
 * shell.spawn and channel.send through whole turns on the real dev server, with the worker's
 * default tools (app/wiring.ts): a supervised process heartbeats its progress to Temporal and
 * completes with its output; a cancelled activity kills the process group; channel.send reaches a
 * channel's deliverer under the call's idempotency key.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import { startHarness, type Harness } from '../support/turn-harness.js';
import { isAlive } from '../support/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-spawn-turn-'));
const timedOutPid = join(dir, 'timed-out.pid');
const cancelledPid = join(dir, 'cancelled.pid');

// The programs are commands of their own on the worker's PATH: an interpreter (`node -e …`) runs
// whatever its arguments say, so no qualified grant reaches it (core/tools/shell-argv.ts).
const bin = join(dir, 'bin');
mkdirSync(bin);
/** `ticker`: prints a line every 500 ms, eight times (~4 s). */
writeFileSync(
  join(bin, 'ticker'),
  '#!/usr/bin/env node\nlet i=0; const t=setInterval(()=>{console.log("tick "+(++i)); if(i===8) clearInterval(t)},500)\n',
);
/** `forever <file>`: writes its pid and its child's pid to `file`, then runs for two minutes. */
writeFileSync(
  join(bin, 'forever'),
  '#!/usr/bin/env node\nconst c=require("child_process").spawn("sleep",["120"],{stdio:"ignore"}); require("fs").writeFileSync(process.argv[2], process.pid+" "+c.pid); setTimeout(()=>{},120000)\n',
);
for (const f of ['ticker', 'forever']) chmodSync(join(bin, f), 0o755);
process.env.PATH = `${bin}:${process.env.PATH ?? ''}`;

const script = {
  rules: [
    {
      match: 'tick for me',
      steps: [
        { call: [{ tool: 'shell.spawn', input: { argv: ['ticker'], maxDurationMs: 30_000 } }] },
        { say: '{{result.0.status}} {{result.0.output}}' },
      ],
    },
    {
      match: 'run past the budget',
      steps: [
        { call: [{ tool: 'shell.spawn', input: { argv: ['forever', timedOutPid], maxDurationMs: 120_000 } }] },
        { say: 'unreachable' },
      ],
    },
    {
      match: 'run until cancelled',
      steps: [
        { call: [{ tool: 'shell.spawn', input: { argv: ['forever', cancelledPid], maxDurationMs: 25_000 } }] },
        { say: 'unreachable' },
      ],
    },
    { match: 'spawn a shell', steps: [{ call: [{ tool: 'shell.spawn', input: { argv: ['sh', '-c', 'id'] } }] }, { say: '{{results}}' }] },
    {
      match: 'tell alice',
      steps: [
        { call: [{ tool: 'channel.send', input: { channel: 'outbox-test', to: 'alice', text: 'the build is green' } }] },
        { say: '{{result.0.status}} {{result.0.output}}' },
      ],
    },
    {
      match: 'tell nobody',
      steps: [
        { call: [{ tool: 'channel.send', input: { channel: 'no-such-channel', to: 'x', text: 'hi' } }] },
        { say: '{{result.0.status}}: {{result.0.error.message}}' },
      ],
    },
    { steps: [{ say: 'hello' }] },
  ],
};

const alive = isAlive;

async function waitFor(cond: () => boolean | Promise<boolean>, ms: number, everyMs = 100): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return cond();
}

function pidsOf(file: string): [number, number] {
  return readFileSync(file, 'utf8').split(' ').map(Number) as [number, number];
}

let h: Harness;
const deliveries = new DeliveryRegistry();
const sent: { to: string; text: string; idemKey: string }[] = [];
const outbox = new Set<string>();

beforeAll(async () => {
  // An outbox-style test deliverer: a key it has seen is never sent again.
  deliveries.register('outbox-test', {
    send: async (to, text, idemKey) => {
      if (outbox.has(idemKey)) return;
      outbox.add(idemKey);
      sent.push({ to, text, idemKey });
    },
  });
  h = await startHarness({
    script,
    deliveries,
    // Plain payloads, so the test can read the running activity's heartbeat details from describe().
    codec: false,
    agent: {
      capabilities: ['llm.call', 'shell.spawn:ticker,forever,sleep', 'channel.send:outbox-test', 'channel.send:no-such-*'],
      budgetMs: 12_000,
      confirmFirst: [],
    },
  });
}, 120_000);
afterAll(async () => {
  for (const f of [timedOutPid, cancelledPid]) {
    if (!existsSync(f)) continue;
    for (const pid of pidsOf(f)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  }
  await h?.stop();
});

describe('shell.spawn in a turn', () => {
  it('runs a ~4 s process to completion, heartbeating its pid to Temporal, and returns its output', async () => {
    const messageId = randomUUID();
    const handle = h.client.workflow.getHandle(turnWorkflowId('test', messageId));
    const details: unknown[] = [];
    let polling = true;
    // While the tool runs, the turn's pending runTool activity carries the tool's last progress heartbeat.
    const poll = (async () => {
      while (polling) {
        try {
          for (const a of (await handle.describe()).raw.pendingActivities ?? []) {
            const p = a.heartbeatDetails?.payloads?.[0];
            if (p?.data && p.data.length > 0) details.push(JSON.parse(Buffer.from(p.data).toString('utf8')));
          }
        } catch {
          // not started yet
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    const t = Date.now();
    const { turnId, outcome } = await h.turn('tick for me', { messageId });
    polling = false;
    await poll;
    expect(Date.now() - t).toBeGreaterThanOrEqual(3_500);
    expect(outcome.status).toBe('Completed');
    const final = outcome.status === 'Completed' ? outcome.finalMessage : '';
    expect(final).toMatch(/^Completed /);
    const output = JSON.parse(final.slice('Completed '.length)) as {
      pid: number;
      exitCode: number;
      stdout: string;
      durationMs: number;
      timedOut: boolean;
    };
    expect(output).toMatchObject({ exitCode: 0, timedOut: false, stdout: [1, 2, 3, 4, 5, 6, 7, 8].map((i) => `tick ${i}\n`).join('') });
    expect(output.durationMs).toBeGreaterThanOrEqual(3_500);
    const progress = details.filter(
      (d): d is { tool: string; pid: number } => typeof d === 'object' && d !== null && (d as { tool?: unknown }).tool === 'shell.spawn',
    );
    expect(progress.length, `heartbeat details seen: ${JSON.stringify(details.slice(0, 3))}`).toBeGreaterThan(0);
    expect(progress.every((d) => d.pid === output.pid)).toBe(true);
    expect(await h.audit(turnId)).toContainEqual(
      expect.objectContaining({
        type: 'ToolCall',
        toolId: 'shell.spawn',
        scopeUsed: 'shell.spawn:ticker',
        outcome: 'Completed(Unverified)',
      }),
    );
  }, 60_000);

  it('when the turn budget runs out mid-process, the cancelled activity kills the process group', async () => {
    const { turnId, outcome } = await h.turn('run past the budget');
    expect(outcome.status).toBe('TimedOut');
    expect(existsSync(timedOutPid)).toBe(true);
    const [leader, child] = pidsOf(timedOutPid);
    // Cancellation reaches the activity with its next heartbeat (throttled to 0.8 × the 10 s heartbeat timeout).
    expect(await waitFor(() => !alive(leader) && !alive(child), 20_000), `pids ${leader} ${child} still alive`).toBe(true);
    // The turn ended first; the cancelled activity audits its call when the kill is done.
    const audit = await h.audit(turnId);
    expect(audit).toContainEqual(expect.objectContaining({ type: 'TurnEnded', outcome: 'TimedOut' }));
    expect(
      await waitFor(
        async () =>
          (await h.audit(turnId)).some((e) => e.type === 'ToolCall' && e.toolId === 'shell.spawn' && e.outcome === 'Failed(Cancelled)'),
        10_000,
      ),
    ).toBe(true);
  }, 60_000);

  // Other tools finish on a channel cancel (seed scenario 4); a long-lived process is the exception:
  // turnWorkflow cancels its activity. (The 10 s wait ends before the 12 s turn budget could cancel
  // the activity itself, so only the channel cancel can make this pass.)
  it('cancelling the turn while the process runs kills the process group promptly', async () => {
    const messageId = randomUUID();
    const turn = h.turn('run until cancelled', { messageId });
    expect(await waitFor(() => existsSync(cancelledPid), 15_000)).toBe(true);
    const [leader, child] = pidsOf(cancelledPid);
    await h.gateway.cancel(turnWorkflowId('test', messageId));
    try {
      expect(
        await waitFor(() => !alive(leader) && !alive(child), 10_000),
        `pids ${leader} ${child} still alive 10 s after the cancel`,
      ).toBe(true);
      const { outcome } = await turn;
      expect(outcome.status).toBe('Cancelled');
    } finally {
      await turn.catch(() => undefined);
    }
  }, 60_000);

  it('is denied for a command outside the allowlist qualifier', async () => {
    const { turnId, outcome } = await h.turn('spawn a shell');
    // A shell runs its arguments: only the unqualified base reaches it, never a qualified grant.
    expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(/shell\.spawn: Denied \(needs shell\.spawn\)/);
    expect(await h.audit(turnId)).toContainEqual(
      expect.objectContaining({ type: 'ScopeDenied', toolAttempted: 'shell.spawn', scopeRequested: 'shell.spawn', scopeQualifier: null }),
    );
  }, 60_000);
});

describe('channel.send in a turn', () => {
  it("sends through the channel's deliverer under the call's idempotency key", async () => {
    const { turnId, outcome } = await h.turn('tell alice the news');
    expect(outcome.status === 'Completed' && outcome.finalMessage).toBe(
      'Completed {"channel":"outbox-test","to":"alice","sent":true,"chars":18}',
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: 'alice', text: 'the build is green' });
    // workflowId/runId/activityId of the runTool activity: stable across its retries.
    expect(sent[0]?.idemKey).toMatch(new RegExp(`^${turnId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[^/]+/[^/]+$`));
    expect(await h.audit(turnId)).toContainEqual(
      expect.objectContaining({
        type: 'ToolCall',
        toolId: 'channel.send',
        scopeUsed: 'channel.send:outbox-test',
        outcome: 'Completed(Unverified)',
      }),
    );
  }, 60_000);

  it('fails clearly for a channel that is not configured', async () => {
    const { outcome } = await h.turn('tell nobody');
    expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(/^Failed: .*no channel named "no-such-channel" is configured/);
  }, 60_000);

  it('is denied on an Untrusted channel', async () => {
    const before = sent.length;
    const { turnId, outcome } = await h.turn('tell alice the news', { tier: 'Untrusted' });
    expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(/^Denied/);
    expect(sent.length).toBe(before);
    expect(await h.audit(turnId)).toContainEqual(
      expect.objectContaining({ type: 'ScopeDenied', toolAttempted: 'channel.send', scopeRequested: 'channel.send' }),
    );
  }, 60_000);
});
