/**
 * Missions at scale on the dev server: N missions (AIVYX_BENCH_MISSIONS, default 1,000) all
 * suspended at an approval gate at once, the RSS of the process hosting the worker before and
 * after, then the approval round trip on a sample of them while the rest keep waiting.
 *
 * Each mission has one step whose scripted LLM proposes `shell.exec` (confirm-first for this
 * agent), so the step turn ends Escalated and the mission opens a gate, as in production: real
 * turns, audit appends on PostgreSQL, attestation, the encrypting payload codec, dashboard
 * search attributes. The worker runs in this process with aivyx's workflow cache (AIVYX_WORKFLOW_CACHE).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createScriptedProvider } from '../activities/llm/scripted-provider.js';
import { signedDecision, signedMissionArgs } from '../channels/mission-gateway.js';
import { createAttestor } from '../infra/attestation.js';
import { aivyxDataConverter, createPayloadCodec } from '../infra/codec/index.js';
import { openDatabase } from '../infra/db/index.js';
import { openKeyring } from '../infra/keyring.js';
import { StreamHub } from '../infra/stream-hub.js';
import { wireTurnActivities } from '../app/wiring.js';
import { createAivyxWorker } from '../app/worker.js';
import { pool, START_CONCURRENCY, startInBatches } from './batches.js';
import { benchMissionShape, type ShapeRate } from './mission-shape.js';
import type { GateApprover } from '../machines/index.js';
import {
  approveGateUpdate,
  missionStartMetadata,
  missionStatusQuery,
  type MissionDefinition,
  type missionWorkflow,
} from '../workflows/mission/mission-workflow.js';

/** What the mission benchmark needs from the bench run. */
export interface MissionBenchInput {
  /** The dev server (with the aivyx search attributes registered). */
  address: string;
  /** A fresh, empty PostgreSQL database for this section alone (its audit entries stay out of the audit section). */
  databaseUrl: string;
  /** The bare activity round trip of the same run (ms), for the ratio. */
  bareMs: number;
  /** The dev server's pid, to report its RSS as well. */
  serverPid?: number;
  /** The run's in-memory floor server, idle by now: where the bare shape of a mission is measured. */
  floorAddress: string;
  env?: NodeJS.ProcessEnv;
}

const APPROVER: GateApprover = { identity: 'alice', channel: 'telegram', trustTier: 'Trusted' };
const SCRIPT = {
  rules: [
    {
      match: 'deploy',
      steps: [
        { call: [{ tool: 'shell.exec', input: { argv: ['echo', 'deployed'] } }] },
        { say: 'deployed: {{results}}', sayOnFailure: 'not deployed: {{results}}' },
      ],
    },
    { steps: [{ say: 'done' }] },
  ],
};
const WARM_UP = 5;
const MiB = 2 ** 20;

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
}

function intFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${raw} must be a positive integer`);
  return n;
}

/** A full garbage collection, so both RSS readings exclude collectable garbage (the bench runs without --expose-gc). */
function fullGc(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Resident set size of another process (Linux /proc), in bytes; undefined elsewhere. */
function rssOf(pid: number | undefined): number | undefined {
  if (pid === undefined || pid < 0) return undefined;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

function definition(): MissionDefinition {
  const missionId = `mission-${randomUUID()}`;
  return {
    missionId,
    goal: 'deploy the build',
    steps: [{ text: 'deploy the build' }],
    approvers: [{ identity: APPROVER.identity, channel: APPROVER.channel }],
    onExpire: 'fail',
    capabilities: ['shell.exec'],
    channel: { name: 'bench', platform: 'Local', trustTier: 'Trusted', sessionId: missionId, sender: 'owner' },
  };
}

/** Runs the benchmark and returns its markdown section for docs/BENCHMARKS.md. */
export async function benchMissions(input: MissionBenchInput): Promise<string[]> {
  const env = input.env ?? process.env;
  const count = intFromEnv(env, 'AIVYX_BENCH_MISSIONS', 1000);
  const approvals = Math.min(intFromEnv(env, 'AIVYX_BENCH_APPROVALS', 200), count);
  const approvalConcurrency = intFromEnv(env, 'AIVYX_BENCH_APPROVAL_CONCURRENCY', 4);
  const batch = intFromEnv(env, 'AIVYX_BENCH_MISSION_BATCH', 100);
  const waitForGatesMs = intFromEnv(env, 'AIVYX_BENCH_MISSIONS_TIMEOUT_S', 3600) * 1000;

  const { db, close } = await openDatabase({ databaseUrl: input.databaseUrl });
  const master = await openKeyring(db, 'bench passphrase', { kdfParams: { m: 256, t: 1, p: 1 } });
  const dataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload')));
  const workerDataConverter = aivyxDataConverter(createPayloadCodec(master.subkey('payload'), { unencrypted: 'refuse' }));
  const attestor = createAttestor(master.subkey('attestation'));
  const connection = await Connection.connect({ address: input.address });
  const client = new Client({ connection, namespace: 'default', dataConverter });
  const native = await NativeConnection.connect({ address: input.address });
  const hub = new StreamHub();
  const activities = wireTurnActivities({
    db,
    master,
    hub,
    llm: createScriptedProvider(SCRIPT),
    agent: { capabilities: ['shell.exec'], budgetMs: 600_000, confirmFirst: ['shell.exec'] },
  });
  const taskQueue = `bench-missions-${randomUUID()}`;
  const worker = await createAivyxWorker({
    connection: native,
    namespace: 'default',
    taskQueue,
    activities,
    dataConverter: workerDataConverter,
    ...(env.AIVYX_WORKFLOW_CACHE ? { workflowCache: intFromEnv(env, 'AIVYX_WORKFLOW_CACHE', 40) } : {}),
  });
  const cacheSize = worker.options.maxCachedWorkflows;
  const missionQuery = `WorkflowType = 'missionWorkflow' AND TaskQueue = '${taskQueue}'`;

  const start = async (def: MissionDefinition): Promise<WorkflowHandle<typeof missionWorkflow>> =>
    client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
      workflowId: def.missionId,
      taskQueue,
      args: [signedMissionArgs(attestor, def, { dashboard: true })],
      ...missionStartMetadata(def),
    });
  const gateOf = async (handle: WorkflowHandle<typeof missionWorkflow>): Promise<string> => {
    for (;;) {
      const s = await handle.query(missionStatusQuery);
      if (s.state === 'waiting' && s.gate?.state === 'open') return s.gate.gateId;
      await delay(20);
    }
  };
  const waitingCount = async (): Promise<number> =>
    (await client.workflow.count(`${missionQuery} AND AivyxMissionState = 'waiting'`)).count;

  try {
    const render = await worker.runUntil(async () => {
      // Warm-up: bundle loaded, V8 context created, pools and caches filled, before the first RSS reading.
      for (let i = 0; i < WARM_UP; i++) {
        const h = await start(definition());
        await h.executeUpdate(approveGateUpdate, { args: [signedDecision(attestor, 'approve', await gateOf(h), APPROVER)] });
        await h.result();
      }
      await delay(1000);
      fullGc();
      const before = process.memoryUsage();
      const serverBefore = rssOf(input.serverPid);

      // N missions, started in batches (the next batch once the previous one is mostly waiting: a flood of
      // 1,000 first workflow tasks at once only measures the server's backlog); each escalates and opens its gate.
      const defs = Array.from({ length: count }, definition);
      let peakRss = before.rss;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 250);
      const deadline = Date.now() + waitForGatesMs;
      const allWaitingS = await startInBatches({
        items: defs,
        batch,
        start: async (d) => void (await start(d)),
        reached: waitingCount,
        deadline,
      });
      // The state attribute is upserted before the GateOpened audit and the notice: let those finish.
      await delay(3000);
      clearInterval(sampler);
      fullGc();
      const after = process.memoryUsage();
      const serverAfter = rssOf(input.serverPid);
      // Every one of them answers the status query with an open gate (a spot check through the worker).
      const sample = defs.filter((_, i) => i % Math.max(1, Math.floor(count / 50)) === 0);
      for (const d of sample) {
        const s = await client.workflow.getHandle<typeof missionWorkflow>(d.missionId).query(missionStatusQuery);
        if (s.state !== 'waiting' || s.gate?.state !== 'open')
          throw new Error(`${d.missionId} is ${s.state}, gate ${s.gate?.state ?? 'none'}`);
      }

      // Approvals on the first `approvals` missions while the other ones keep waiting: half of them one at a
      // time (the latency of one approval), then the other half `approvalConcurrency` at a time (under load:
      // each approved mission runs its step turn while the next approvals arrive).
      interface Timings {
        update: number[];
        advanced: number[];
        completed: number[];
      }
      const approve = async (d: MissionDefinition, into: Timings): Promise<void> => {
        const handle = client.workflow.getHandle<typeof missionWorkflow>(d.missionId);
        const gateId = `${d.missionId}/gate-1`;
        const ts = performance.now();
        const res = await handle.executeUpdate(approveGateUpdate, { args: [signedDecision(attestor, 'approve', gateId, APPROVER)] });
        into.update.push(performance.now() - ts);
        if (res.state !== 'approved') throw new Error(`gate ${gateId} is ${res.state} after approval`);
        for (;;) {
          const s = await handle.query(missionStatusQuery);
          if (s.state !== 'waiting') break;
          await delay(5);
        }
        into.advanced.push(performance.now() - ts);
        const result = await handle.result();
        into.completed.push(performance.now() - ts);
        if (result.state !== 'completed') throw new Error(`${d.missionId} ended ${result.state}`);
      };
      const single: Timings = { update: [], advanced: [], completed: [] };
      const loaded: Timings = { update: [], advanced: [], completed: [] };
      const singles = Math.ceil(approvals / 2);
      await pool(defs.slice(0, singles), 1, (d) => approve(d, single));
      await pool(defs.slice(singles, approvals), approvalConcurrency, (d) => approve(d, loaded));
      const stillWaiting = await waitingCount();
      const missionRate = count / allWaitingS;

      const mib = (b: number) => `${(b / MiB).toFixed(0)} MiB`;
      const delta = after.rss - before.rss;
      const row = (name: string, xs: number[]) => {
        const p50 = percentile(xs, 0.5);
        return `| ${name} | ${p50.toFixed(1)} ms | ${percentile(xs, 0.95).toFixed(1)} ms | ${(p50 / input.bareMs).toFixed(2)}× |`;
      };
      const server =
        serverBefore !== undefined && serverAfter !== undefined
          ? [`| dev server RSS (temporal CLI process) | ${mib(serverBefore)} | ${mib(serverAfter)} | +${mib(serverAfter - serverBefore)} |`]
          : [];
      return (shape: ShapeRate): string[] => [
        '## Missions waiting at gates',
        '',
        `${count.toLocaleString('en-US')} missions (\`AIVYX_BENCH_MISSIONS\`) started on the dev server, each with one step whose scripted LLM proposes \`shell.exec\`, confirm-first for this agent: the step turn (a real turn: attestation, LLM and tool activities, audit on PostgreSQL, encrypting payload codec) ends Escalated and the mission waits at its gate with \`AivyxMissionState = 'waiting'\`. The worker runs in the bench process with aivyx's workflow cache (\`AIVYX_WORKFLOW_CACHE\`, \`maxCachedWorkflows\` = ${cacheSize.toLocaleString('en-US')}), so ${cacheSize >= count ? 'every waiting mission stays cached' : 'waiting missions beyond the cache are evicted and replayed on approval'}. RSS is \`process.memoryUsage().rss\` of that process after ${WARM_UP} warm-up missions and a full GC, and again (after a full GC) once the visibility count of waiting missions reached ${count.toLocaleString('en-US')} plus 3 s for the last audit appends and notices.`,
        '',
        '| memory | before | all waiting | delta |',
        '|---|---|---|---|',
        `| worker process RSS | ${mib(before.rss)} | ${mib(after.rss)} | +${mib(delta)} (${(delta / count / 1024).toFixed(1)} KiB per waiting mission; peak while starting ${mib(peakRss)}) |`,
        `| worker process V8 heap used | ${mib(before.heapUsed)} | ${mib(after.heapUsed)} | +${mib(after.heapUsed - before.heapUsed)} |`,
        ...server,
        '',
        `Started in batches of ${batch} (\`AIVYX_BENCH_MISSION_BATCH\`; ${START_CONCURRENCY} concurrent starts, the next batch once at most half a batch is still on its way to the gate): all ${count.toLocaleString('en-US')} waiting after ${allWaitingS.toFixed(1)} s (**${missionRate.toFixed(1)} missions/s** from start to an open gate).`,
        '',
        `The floor of that rate, measured afterwards on the run's in-memory floor server with this section's worker stopped: ${count.toLocaleString('en-US')} workflows of a mission's bare Temporal shape (\`bareMissionShape\` in bench/bench-workflows.ts: a child workflow running two remote activities, one more remote activity, then a wait; no-op activities, a worker with SDK defaults, started the same way; counted when the last activity runs, one activity dispatch after the point where a mission is counted, its state upsert that schedules the approvers' notice) all ran their last activity after ${shape.seconds.toFixed(1)} s (${shape.perSecond.toFixed(1)}/s). Missions reach their gate at **${(missionRate / shape.perSecond).toFixed(2)}×** the rate of their bare shape; 20 missions/s would be ${(20 / shape.perSecond).toFixed(2)}× of it.`,
        '',
        `Then ${approvals} of them are approved with the \`approveGate\` update while the other ${(count - approvals).toLocaleString('en-US')} keep waiting (${stillWaiting.toLocaleString('en-US')} still waiting at the end): ${single.update.length} one at a time (the latency of an approval), then ${loaded.update.length} ${approvalConcurrency} at a time (under load: every approved mission runs its step turn while the next approvals arrive). They are the first missions started, so with fewer cache slots than waiting missions each one has been evicted and replays. Each interval starts when the update is sent:`,
        '',
        '- **update returned**: `executeUpdate` resolved — the worker verified the decision (`verifyGateDecision`: proof, approver, first decision; `GateApproved` appended) and the handler moved the gate machine to `approved`, in a completed workflow task;',
        `- **mission advanced**: the first \`missionStatus\` query (polled every 5 ms after the update returned) that reports the mission machine out of \`waiting\` — the step is rerunning with its one-shot grant;`,
        '- **mission completed**: the workflow result arrived — the rerun step turn ran the granted `shell.exec` and the mission ended `completed`.',
        '',
        `| approval round trip | p50 | p95 | p50 vs bare activity round trip (${input.bareMs.toFixed(2)} ms) |`,
        '|---|---|---|---|',
        row(`one at a time (${single.update.length}): update sent → update returned`, single.update),
        row(`one at a time: update sent → **mission advanced**`, single.advanced),
        row('one at a time: update sent → mission completed', single.completed),
        row(`${approvalConcurrency} at a time (${loaded.update.length}): update sent → update returned`, loaded.update),
        row(`${approvalConcurrency} at a time: update sent → mission advanced`, loaded.advanced),
        row(`${approvalConcurrency} at a time: update sent → mission completed`, loaded.completed),
        '',
      ];
    });
    // The floor of the rate: as many bare-shape workflows, on the idle floor server (this section's missions stay out of its way).
    const shape = await benchMissionShape(input.floorAddress, { count, batch, deadline: Date.now() + waitForGatesMs });
    return render(shape);
  } finally {
    await native.close();
    await connection.close();
    await close();
  }
}
