/** Baseline workflows for the benchmarks: bare Temporal operations, nothing of ours. */
import { condition, defineSignal, executeChild, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';

const { noop, atGate } = proxyActivities<{ noop(): Promise<void>; atGate(): Promise<void> }>({ startToCloseTimeout: '30 seconds' });

/** Runs `n` no-op activities one after another. */
export async function bareActivityLoop(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await noop();
}

/** A turn's bare shape: two remote activities (the model step and the tool) one after another. */
export async function bareTurnShape(): Promise<void> {
  await noop();
  await noop();
}

export const releaseSignal = defineSignal('release');

/**
 * A mission's bare shape on its way to a gate: the step turn as a child workflow, then one remote
 * activity (the approvers' notice), then a wait for a signal. No search attributes, timers, local
 * activities, codec or audit: the Temporal operations the contract needs and nothing else.
 */
export async function bareMissionShape(): Promise<void> {
  let released = false;
  setHandler(releaseSignal, () => void (released = true));
  await executeChild(bareTurnShape, { workflowId: `${workflowInfo().workflowId}/turn` });
  await atGate();
  await condition(() => released);
}
