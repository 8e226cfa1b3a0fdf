/**
 * `missionWorkflow`: hosts the mission machine. Each step runs as a child `turnWorkflow`; a
 * step that ends `Escalated` opens a gate (the gate machine) for exactly its pending call. A
 * gate is decided only by the `approveGate`/`denyGate` Updates — never by a tool call, so the
 * model can never approve. Reminder, escalation and expiry are durable timers (`condition` with
 * a timeout); the machines never read a clock. See docs/MISSIONS.md.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { createActor, type Actor } from 'xstate';
import type { MissionActivities, MissionAuditEvent } from '../activities/mission-activities.js';
import type { TurnRequest } from '../core/channel.js';
import { textContent } from '../core/message.js';
import type { TurnOutcome } from '../core/outcomes.js';
import { describeCall } from '../core/tools/describe-call.js';
import { AivyxApprover, AivyxMissionState, AivyxOpenGate } from '../core/search-attributes.js';
import { approverRefusal, currentApprovers, durationMs, gateMachine, missionMachine, type GateApproverRef, type GateEvent } from '../machines/index.js';
import {
  approveGateUpdate,
  cancelMissionSignal,
  denyGateUpdate,
  missionStatusQuery,
  type GateCallView,
  type GateDecisionRequest,
  type GateDecisionResult,
  type MissionArgs,
  type MissionResult,
} from './mission-messages.js';
import { turnWorkflow } from './turn-workflow.js';

export * from './mission-messages.js';

const acts = proxyActivities<MissionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '200 ms', maximumInterval: '10 seconds', nonRetryableErrorTypes: ['Audit', 'Config', 'Crypto'] },
});

/** Defaults of a mission's gate timers. */
export const GATE_DEFAULTS = { reminderAfter: '24h', expireAfter: '72h' } as const;
const DEFAULT_HISTORY_LIMIT = 4_000;

/** `Omit` that distributes over the audit event union. */
type MissionEventBody = MissionAuditEvent extends infer E ? (E extends MissionAuditEvent ? Omit<E, 'turnId' | 'missionId'> : never) : never;

const names = (list: readonly GateApproverRef[]): string[] => list.map((a) => `${a.identity}@${a.channel}`);

/** An XState actor error turned into a workflow failure (a plain throw would only retry the task forever). */
function machineFailure(which: string, err: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type: 'Internal', nonRetryable: true, message: `${which} machine error: ${err instanceof Error ? err.message : String(err)}` });
}

/**
 * The mission actor, fresh or restored from the snapshot carried through continue-as-new. A
 * snapshot the machine cannot restore (corrupted, or from an incompatible machine version) fails
 * the mission now instead of failing every workflow task forever.
 */
function restoreMission(args: MissionArgs, onError: (err: unknown) => void): Actor<typeof missionMachine> {
  const input = { stepCount: args.definition.steps.length, onExpire: args.definition.onExpire };
  const snapshot = args.carried?.snapshot;
  if (args.carried && (typeof snapshot !== 'object' || snapshot === null)) throw machineFailure('mission', 'the carried snapshot is not a machine snapshot');
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

/** The mission workflow: runs every step to the end, waiting durably at gates; continues-as-new with the persisted snapshot. */
export async function missionWorkflow(args: MissionArgs): Promise<MissionResult> {
  const def = args.definition;
  const missionId = def.missionId;
  const reminderMs = durationMs(def.reminderAfter ?? GATE_DEFAULTS.reminderAfter);
  const expireMs = durationMs(def.expireAfter ?? GATE_DEFAULTS.expireAfter);
  const escalateMs = def.escalateAfter !== undefined && (def.secondApprovers?.length ?? 0) > 0 ? durationMs(def.escalateAfter) : undefined;
  const historyLimit = args.historyLimit ?? DEFAULT_HISTORY_LIMIT;

  let machineError: { which: string; err: unknown } | undefined;
  const mission = restoreMission(args, (err) => (machineError = { which: 'mission', err }));
  let gate: Actor<typeof gateMachine> | undefined;
  let gateView: GateCallView | undefined;
  let gateSeq = args.carried?.gateSeq ?? 0;
  let stepsRun = args.carried?.stepsRun ?? 0;
  let cancelState: { reason: string } | undefined;
  // Set by the signal handler and by a Temporal cancel; read through a function so narrowing never goes stale.
  const cancelled = (): { reason: string } | undefined => cancelState;

  /** Operator view: current details always; search attributes only when `args.dashboard` (the time-skipping server has none). */
  let published = '';
  const publish = (): void => {
    const s = mission.getSnapshot();
    const g = gate?.getSnapshot();
    const state = String(s.value);
    const openGate = g && g.status === 'active' ? g.context.gateId : undefined;
    const approver = g ? (g.context.decidedBy ? g.context.decidedBy.identity : openGate ? currentApprovers(g.context).map((a) => a.identity).join(',') : undefined) : undefined;
    const key = JSON.stringify([state, s.context.step, openGate, g ? String(g.value) : undefined, approver]);
    if (key === published) return;
    published = key;
    setCurrentDetails(
      [
        `**Mission** ${missionId}: **${state}**`,
        `- step ${Math.min(s.context.step + 1, def.steps.length)} of ${def.steps.length}, ${stepsRun} run`,
        ...(g ? [`- gate \`${g.context.gateId}\` (${String(g.value)}) for \`${g.context.tool}\`${approver ? `; approver: ${approver}` : ''}`] : []),
      ].join('\n'),
    );
    if (args.dashboard) {
      upsertSearchAttributes([
        { key: AivyxMissionState, value: state },
        { key: AivyxOpenGate, value: openGate ?? null },
        { key: AivyxApprover, value: approver ?? null },
      ]);
    }
  };

  /** Sends to an actor and surfaces XState errors as a failure, not silence; publishes the new state. */
  const checked = (): void => {
    if (machineError) throw machineFailure(machineError.which, machineError.err);
    if (mission.getSnapshot().status === 'error') throw machineFailure('mission', mission.getSnapshot().error);
    if (gate && gate.getSnapshot().status === 'error') throw machineFailure('gate', gate.getSnapshot().error);
    publish();
  };
  const audit = (event: MissionEventBody): Promise<void> =>
    acts.recordMissionEvent({ turnId: missionId, missionId, ...event } as MissionAuditEvent);

  /** Throws (rejecting the update, changing nothing) unless the gate is open and the approver may decide it. */
  const validateDecision = (req: GateDecisionRequest): void => {
    if (!gate || gate.getSnapshot().context.gateId !== req.gateId) throw new Error(`mission ${missionId} has no gate "${req.gateId}"`);
    const snap = gate.getSnapshot();
    if (snap.status !== 'active') throw new Error(`gate ${req.gateId} is closed (${String(snap.value)}): a gate decides once`);
    const why = approverRefusal(snap.context, req.approver);
    if (why) throw new Error(why);
  };
  const decide = (type: 'APPROVE' | 'DENY') => (req: GateDecisionRequest): GateDecisionResult => {
    const g = gate;
    if (!g) throw ApplicationFailure.create({ type: 'NotFound', message: 'no gate', nonRetryable: true });
    g.send({ type, approver: req.approver, ...(req.reason ? { reason: req.reason } : {}) });
    checked();
    return { gateId: req.gateId, state: String(g.getSnapshot().value) };
  };
  setHandler(approveGateUpdate, decide('APPROVE'), { validator: validateDecision, description: 'Approve the open gate: { gateId, approver: { identity, channel, trustTier }, reason? }' });
  setHandler(denyGateUpdate, decide('DENY'), { validator: validateDecision, description: 'Deny the open gate: { gateId, approver: { identity, channel, trustTier }, reason? }' });
  setHandler(
    cancelMissionSignal,
    ({ reason }) => {
      cancelState ??= { reason: reason ?? 'mission cancelled' };
    },
    { description: 'Cancel the mission: { reason? }; an open gate is withdrawn and its approvers told' },
  );
  setHandler(missionStatusQuery, () => {
    const s = mission.getSnapshot();
    const g = gate?.getSnapshot();
    return {
      missionId,
      state: String(s.value),
      step: s.context.step,
      stepsRun,
      ...(g ? { gate: { gateId: g.context.gateId, state: String(g.value), tool: g.context.tool, inputHash: g.context.inputHash, approvers: g.context.approvers.slice(), ...gateView } } : {}),
    };
  }, { description: 'The mission state, current step, steps run and the current gate, if any' });
  // A Temporal cancel of the mission means the same as the signal.
  CancellationScope.current().cancelRequested.catch(() => {
    cancelState ??= { reason: 'mission cancelled' };
  });

  return CancellationScope.nonCancellable(async (): Promise<MissionResult> => {
    publish();
    if (!args.carried) {
      await audit({ type: 'MissionStarted', goal: def.goal, stepCount: def.steps.length });
      mission.send({ type: 'START' });
      checked();
    }
    let stepsThisRun = 0;
    // A confirmation mission starts at its gate: the asking turn's escalation stands in for step 1's first run.
    let seeded = !args.carried ? def.pendingGate : undefined;

    while (mission.getSnapshot().status === 'active') {
      const snap = mission.getSnapshot();
      if (cancelled()) {
        mission.send({ type: 'CANCEL' });
        checked();
        break;
      }
      if (snap.value !== 'running') throw machineFailure('mission', `unexpected state ${String(snap.value)} outside a gate`);

      const info = workflowInfo();
      if (stepsThisRun > 0 && (info.continueAsNewSuggested || info.historyLength > historyLimit)) {
        await condition(allHandlersFinished);
        return continueAsNew<typeof missionWorkflow>({ ...args, carried: { snapshot: mission.getPersistedSnapshot(), gateSeq, stepsRun } });
      }

      // Run step k as a child turn, attested by the worker (the workflow holds no key).
      const { step, attempt, grant } = snap.context;
      let outcome: TurnOutcome;
      if (seeded) {
        outcome = { status: 'Escalated', reason: seeded.reason, pendingTool: seeded.tool, pendingInput: seeded.input, toolCallsMade: 0 };
        await audit({ type: 'MissionStepFinished', step, attempt, stepTurnId: seeded.turnId, outcome: outcome.status });
        seeded = undefined;
      } else {
        const turnId = `${missionId}/step-${step}/run-${attempt}`;
        const request = await acts.attestStepTurn({
          turnId,
          message: { id: turnId, sessionId: def.channel.sessionId, content: textContent(def.steps[step]?.text ?? ''), receivedAt: Date.now() },
          channel: def.channel,
          capabilityLimit: def.capabilities,
          ...(grant ? { oneShotGrant: grant } : {}),
          ...(def.replyRoute ? { replyRoute: def.replyRoute } : {}),
        } satisfies TurnRequest);
        outcome = await runStepTurn(request);
        stepsRun++;
        stepsThisRun++;
        await audit({ type: 'MissionStepFinished', step, attempt, stepTurnId: turnId, outcome: outcome.status });
      }

      if (outcome.status === 'Completed') {
        mission.send({ type: 'STEP_DONE' });
        checked();
        continue;
      }
      if (outcome.status !== 'Escalated') {
        const reason = outcome.status === 'Failed' ? `${outcome.error.kind}: ${outcome.error.message}` : `step turn ended ${outcome.status}`;
        mission.send({ type: 'STEP_FAILED', reason });
        checked();
        continue;
      }

      // Escalated: a gate for exactly this pending call.
      gateSeq++;
      const gateId = `${missionId}/gate-${gateSeq}`;
      const inputHash = await acts.hashToolInput(outcome.pendingInput ?? null);
      gate = createActor(gateMachine, { input: { gateId, tool: outcome.pendingTool, inputHash, approvers: def.approvers, ...(def.secondApprovers ? { secondApprovers: def.secondApprovers } : {}) } });
      gate.subscribe({ error: (err) => (machineError = { which: 'gate', err }) });
      gate.start();
      mission.send({ type: 'STEP_ESCALATED', gateId });
      checked();
      await audit({ type: 'GateOpened', gateId, step, tool: outcome.pendingTool, inputHash, approvers: names(def.approvers) });
      const openedAt = Date.now();
      // What every notice of this gate says about it (channels that show a full request use these).
      // The call is rendered here, once (bounded lines, secrets redacted), never shipped raw to every notice.
      const about = { goal: def.goal, tool: outcome.pendingTool, inputHash, why: outcome.reason, deadline: openedAt + expireMs, call: describeCall(outcome.pendingTool, outcome.pendingInput).lines, askedBy: { identity: def.channel.sender, channel: def.channel.name } };
      gateView = { call: about.call, why: about.why, askedBy: about.askedBy };
      await acts.notifyApprovers({ missionId, gateId, kind: 'opened', approvers: def.approvers, text: `${outcome.pendingTool} needs approval: ${outcome.reason}`, ...about });

      const g = gate;
      let reminded = false;
      let escalated = false;
      // Everyone who was asked about this gate (second approvers only once it escalated).
      const allTold = () => [...def.approvers, ...(escalated ? (def.secondApprovers ?? []) : [])];
      const isDecided = () => g.getSnapshot().status !== 'active';
      while (!isDecided()) {
        const due = Math.min(reminded ? Infinity : openedAt + reminderMs, escalated || escalateMs === undefined ? Infinity : openedAt + escalateMs, openedAt + expireMs);
        const woke = await condition(() => isDecided() || cancelled() !== undefined, Math.max(1, due - Date.now()));
        if (isDecided()) break;
        const c = cancelled();
        if (c) {
          g.send({ type: 'WITHDRAW', reason: c.reason });
          break;
        }
        if (woke) continue;
        const now = Date.now();
        const fire: GateEvent[] = [];
        if (!reminded && now >= openedAt + reminderMs) {
          reminded = true;
          fire.push({ type: 'REMIND' });
        }
        if (!escalated && escalateMs !== undefined && now >= openedAt + escalateMs) {
          escalated = true;
          fire.push({ type: 'ESCALATE' });
        }
        if (now >= openedAt + expireMs) fire.push({ type: 'EXPIRE' });
        for (const e of fire) {
          if (e.type === 'EXPIRE') break;
          g.send(e);
          checked();
          if (e.type === 'REMIND') {
            await audit({ type: 'GateReminded', gateId, afterMs: now - openedAt });
            await acts.notifyApprovers({ missionId, gateId, kind: 'reminder', approvers: def.approvers, text: `still waiting for a decision on ${outcome.pendingTool}`, ...about });
          } else {
            const all = [...def.approvers, ...(def.secondApprovers ?? [])];
            await audit({ type: 'GateEscalated', gateId, approvers: names(all), afterMs: now - openedAt });
            await acts.notifyApprovers({ missionId, gateId, kind: 'escalated', approvers: def.secondApprovers ?? [], text: `escalated to you: ${outcome.pendingTool} needs approval`, ...about });
          }
        }
        // Expiry last, and only if no decision arrived meanwhile (an update may have landed during the awaits).
        if (fire.some((e) => e.type === 'EXPIRE') && !isDecided()) g.send({ type: 'EXPIRE' });
      }
      checked();

      const decided = g.getSnapshot();
      const by = decided.context.decidedBy;
      const reason = decided.context.reason;
      switch (decided.value) {
        case 'approved':
          await audit({ type: 'GateApproved', gateId, approver: by?.identity ?? '', approverChannel: by?.channel ?? '', approverTier: by?.trustTier ?? 'Untrusted', ...(reason ? { reason } : {}) });
          await acts.notifyApprovers({ missionId, gateId, kind: 'decided', approvers: allTold(), text: `approved by ${by?.identity ?? '?'}@${by?.channel ?? '?'}`, ...about });
          mission.send({ type: 'GATE_APPROVED', grant: { gateId, tool: decided.context.tool, inputHash: decided.context.inputHash } });
          break;
        case 'denied':
          await audit({ type: 'GateDenied', gateId, approver: by?.identity ?? '', approverChannel: by?.channel ?? '', approverTier: by?.trustTier ?? 'Untrusted', ...(reason ? { reason } : {}) });
          await acts.notifyApprovers({ missionId, gateId, kind: 'decided', approvers: allTold(), text: `denied by ${by?.identity ?? '?'}@${by?.channel ?? '?'}${reason ? `: ${reason}` : ''}`, ...about });
          mission.send({ type: 'GATE_DENIED', reason: `gate denied by ${by?.identity ?? '?'}${reason ? `: ${reason}` : ''}` });
          break;
        case 'expired':
          await audit({ type: 'GateExpired', gateId, afterMs: Date.now() - openedAt });
          await acts.notifyApprovers({ missionId, gateId, kind: 'expired', approvers: def.approvers, text: `the gate expired; the mission ${def.onExpire === 'fail' ? 'ends' : 'skips the step'}`, ...about });
          mission.send({ type: 'GATE_EXPIRED' });
          break;
        case 'withdrawn':
          await audit({ type: 'GateWithdrawn', gateId, reason: reason ?? 'mission cancelled' });
          await acts.notifyApprovers({ missionId, gateId, kind: 'withdrawn', approvers: allTold(), text: `withdrawn: ${reason ?? 'mission cancelled'}`, ...about });
          mission.send({ type: 'CANCEL' });
          break;
      }
      checked();
    }

    const end = mission.getSnapshot();
    const result: MissionResult = {
      missionId,
      state: end.value as MissionResult['state'],
      stepsRun,
      ...(end.context.failure ? { reason: end.context.failure } : cancelled() ? { reason: cancelled()?.reason ?? '' } : {}),
    };
    publish();
    await audit({ type: 'MissionEnded', state: result.state, ...(result.reason ? { reason: result.reason } : {}) });
    await condition(allHandlersFinished);
    return result;
  });
}

/** Runs one step turn as a child; a failed turn's outcome is read back from the failure's details. */
async function runStepTurn(request: TurnRequest): Promise<TurnOutcome> {
  try {
    return await executeChild(turnWorkflow, { workflowId: request.turnId, args: [request] });
  } catch (err) {
    if (err instanceof ChildWorkflowFailure && err.cause instanceof ApplicationFailure) {
      const detail = err.cause.details?.[0] as TurnOutcome | undefined;
      if (detail && typeof detail === 'object' && 'status' in detail) return detail;
      return { status: 'Failed', error: { kind: 'Internal', message: err.cause.message }, toolCallsMade: 0 };
    }
    throw err;
  }
}
