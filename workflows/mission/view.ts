/**
 * The operator's view of a mission: the Temporal UI's current details (always), the dashboard's
 * search attributes (only when `args.dashboard`: the time-skipping server has none), and the
 * status query's answer. None of it confers anything.
 */
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { AivyxApprover, AivyxMissionState, AivyxOpenGate } from '../../core/search-attributes.js';
import { describeSpendAgainst, spentAnything } from '../../core/spend.js';
import { currentApprovers } from '../../machines/index.js';
import type { MissionStatus } from '../mission-messages.js';
import { machineFailure } from './restore.js';
import type { MissionRun } from './state.js';

/** The state the operator sees: 'waiting' while a wait step runs outside a gate. */
function shownState(run: MissionRun): string {
  const value = String(run.mission.getSnapshot().value);
  return run.waitingFor && value === 'running' ? 'waiting' : value;
}

/** Who decided the current gate, or who may decide it while it is open. */
function shownApprover(run: MissionRun, openGate: string | undefined): string | undefined {
  const g = run.gate?.getSnapshot();
  if (!g) return undefined;
  if (g.context.decidedBy) return g.context.decidedBy.identity;
  return openGate
    ? currentApprovers(g.context)
        .map((a) => a.identity)
        .join(',')
    : undefined;
}

/** Shows the mission's state in the UI; upserts the search attributes only when what they say changed. */
export function publish(run: MissionRun): void {
  const s = run.mission.getSnapshot();
  const g = run.gate?.getSnapshot();
  const state = shownState(run);
  const openGate = g && g.status === 'active' ? g.context.gateId : undefined;
  const approver = shownApprover(run, openGate);
  // The search attributes (a command) follow exactly the fields they always did, so a history recorded
  // before spend existed replays with the same commands; the details (no command) also show the spend.
  const commandKey = JSON.stringify([state, s.context.step, openGate, g ? String(g.value) : undefined, approver, run.waitingFor]);
  const key = JSON.stringify([commandKey, run.spent, run.budget]);
  if (key === run.published) return;
  const upsert = commandKey !== run.publishedCommands;
  run.published = key;
  run.publishedCommands = commandKey;
  const steps = run.def.steps.length;
  setCurrentDetails(
    [
      `**Mission** ${run.missionId}: **${state}**`,
      `- step ${Math.min(s.context.step + 1, steps)} of ${steps}, ${run.stepsRun} run`,
      ...(run.waitingFor ? [`- waiting: ${run.waitingFor}`] : []),
      ...(spentAnything(run.spent) || run.budget ? [`- spent: ${describeSpendAgainst(run.spent, run.budget)}`] : []),
      ...(g
        ? [`- gate \`${g.context.gateId}\` (${String(g.value)}) for \`${g.context.tool}\`${approver ? `; approver: ${approver}` : ''}`]
        : []),
    ].join('\n'),
  );
  if (run.args.dashboard && upsert) {
    upsertSearchAttributes([
      { key: AivyxMissionState, value: state },
      { key: AivyxOpenGate, value: openGate ?? null },
      { key: AivyxApprover, value: approver ?? null },
    ]);
  }
}

/** After sending to an actor: surfaces XState errors as a failure, not silence; publishes the new state. */
export function checked(run: MissionRun): void {
  if (run.machineError) throw machineFailure(run.machineError.which, run.machineError.err);
  if (run.mission.getSnapshot().status === 'error') throw machineFailure('mission', run.mission.getSnapshot().error);
  if (run.gate && run.gate.getSnapshot().status === 'error') throw machineFailure('gate', run.gate.getSnapshot().error);
  publish(run);
}

/** The status query's answer: state, step, steps run, what it waits for, spend, and the current gate. */
export function missionStatus(run: MissionRun): MissionStatus {
  const g = run.gate?.getSnapshot();
  return {
    missionId: run.missionId,
    state: shownState(run),
    step: run.mission.getSnapshot().context.step,
    stepsRun: run.stepsRun,
    ...(run.waitingFor ? { waiting: run.waitingFor } : {}),
    ...(spentAnything(run.spent) ? { spent: run.spent } : {}),
    ...(run.budget ? { budget: run.budget } : {}),
    ...(g
      ? {
          gate: {
            gateId: g.context.gateId,
            state: String(g.value),
            tool: g.context.tool,
            inputHash: g.context.inputHash,
            approvers: g.context.approvers.slice(),
            ...run.gateView,
          },
        }
      : {}),
  };
}
