/**
 * The floor of the missions-to-a-gate rate: workflows with a mission's bare Temporal shape (bench-workflows.ts,
 * `bareMissionShape`: a child workflow with two remote activities, one more remote activity, then a wait),
 * started the way the real missions are (on the run's idle in-memory floor server, not the missions'
 * server, so neither run is in the other's way), by a worker with SDK defaults and no-op activities. What the real missions add to it (audit, attestation, the codec, the machines) is ours.
 */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { bareWorker } from './bare-worker.js';
import { startInBatches } from './batches.js';

/** Workflows of the bare shape that ran their last activity (`atGate`), per second. */
export interface ShapeRate {
  count: number;
  seconds: number;
  perSecond: number;
}

/**
 * Brings `count` bare-shape workflows to their wait on the dev server at `address`, in batches of `batch`.
 * They are left waiting (no worker polls their queue afterwards); the server is the bench run's own and
 * is stopped with it.
 */
export async function benchMissionShape(address: string, opts: { count: number; batch: number; deadline: number }): Promise<ShapeRate> {
  const connection = await Connection.connect({ address });
  const native = await NativeConnection.connect({ address });
  try {
    return await run(new Client({ connection }), native, opts);
  } finally {
    await native.close();
    await connection.close();
  }
}

async function run(client: Client, native: NativeConnection, opts: { count: number; batch: number; deadline: number }): Promise<ShapeRate> {
  const taskQueue = `bench-shape-${randomUUID()}`;
  let atGate = 0;
  const worker = await bareWorker(native, taskQueue, { noop: async () => undefined, atGate: async () => void atGate++ });
  const start = (id: string) => client.workflow.start('bareMissionShape', { taskQueue, workflowId: id }).then(() => undefined);
  return worker.runUntil(async () => {
    // Warm-up, as for the real missions: the bundle loaded and the V8 context created before the clock starts.
    for (let i = 0; i < 5; i++) await start(`shape-warm-${randomUUID()}`);
    while (atGate < 5) await new Promise((r) => setTimeout(r, 20));
    atGate = 0;
    const seconds = await startInBatches({
      items: Array.from({ length: opts.count }, () => `shape-${randomUUID()}`),
      batch: opts.batch,
      start,
      reached: async () => atGate,
      deadline: opts.deadline,
    });
    return { count: opts.count, seconds, perSecond: opts.count / seconds };
  });
}
