/**
 * Restoring the mission actor in `missionWorkflow` (fresh, or from the snapshot carried through
 * continue-as-new), with XState errors turned into workflow failures: a plain throw in workflow code
 * would only fail the workflow task, which Temporal retries forever.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { createActor, type Actor } from 'xstate';
import { missionMachine } from '../../machines/index.js';
import type { MissionArgs } from '../mission-messages.js';

/** An XState actor error turned into a workflow failure (a plain throw would only retry the task forever). */
export function machineFailure(which: string, err: unknown): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'Internal',
    nonRetryable: true,
    message: `${which} machine error: ${err instanceof Error ? err.message : String(err)}`,
  });
}

/**
 * The mission actor, fresh or restored from the snapshot carried through continue-as-new. A
 * snapshot the machine cannot restore (corrupted, or from an incompatible machine version) fails
 * the mission now instead of failing every workflow task forever.
 */
export function restoreMission(args: MissionArgs, onError: (err: unknown) => void): Actor<typeof missionMachine> {
  const input = { stepCount: args.definition.steps.length, onExpire: args.definition.onExpire };
  const snapshot = args.carried?.snapshot;
  if (args.carried && (typeof snapshot !== 'object' || snapshot === null))
    throw machineFailure('mission', 'the carried snapshot is not a machine snapshot');
  let actor: Actor<typeof missionMachine>;
  try {
    actor = createActor(missionMachine, { input, ...(args.carried ? { snapshot: snapshot as never } : {}) });
  } catch (err) {
    throw machineFailure('mission', err);
  }
  // Subscribe before start: XState reports a failed restore to error observers, or else rethrows it later, outside our code.
  actor.subscribe({ error: onError });
  actor.start();
  const snap = actor.getSnapshot();
  if (snap.status === 'error') throw machineFailure('mission', snap.error);
  return actor;
}
