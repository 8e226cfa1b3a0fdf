/** Baseline workflow for the benchmarks: bare Temporal activity round trips, nothing of ours. */
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '30 seconds' });

/** Runs `n` no-op activities one after another. */
export async function bareActivityLoop(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await noop();
}
