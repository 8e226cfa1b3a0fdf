/**
 * `missionWorkflow`: hosts the mission machine. Each step runs as a child `turnWorkflow`; a
 * step that ends `Escalated` opens a gate (the gate machine) for exactly its pending call. A
 * gate is decided only by the `approveGate`/`denyGate` Updates — never by a tool call, so the
 * model can never approve. Reminder, escalation and expiry are durable timers (`condition` with
 * a timeout); the machines never read a clock. See docs/MISSIONS.md.
 */
import { ACTIVITY_POLICIES, LOCAL_ACTIVITY_POLICIES } from '../core/activity-policies.js';
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  type ChildWorkflowHandle,
  allHandlersFinished,
  condition,
  continueAsNew,
  executeChild,
  patched,
  startChild,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { createActor, type Actor } from 'xstate';
import type { MissionActivities, MissionAuditEvent, MissionNotice } from '../activities/mission-activities.js';
import type { TurnRequest } from '../core/channel.js';
import type { TurnOutcome } from '../core/outcomes.js';
import {
  addSpend,
  budgetUsedUp,
  describeBudget,
  describeSpendAgainst,
  NO_SPEND,
  raisedBudget,
  spendFields,
  spentAnything,
  type Spend,
  type SpendBudget,
} from '../core/spend.js';
import { describeCall } from '../core/tools/describe-call.js';
import { OWNERS_ONLY_NOTE } from '../core/gate-approvers.js';
import { AivyxApprover, AivyxMissionState, AivyxOpenGate } from '../core/search-attributes.js';
import {
  approverRefusal,
  checkSteps,
  currentApprovers,
  durationMs,
  eventLabel,
  gateMachine,
  isTurnStep,
  stepLabel,
  waitEndsAt,
  type GateApproverRef,
  type GateEvent,
  type StepGrant,
} from '../machines/index.js';
import {
  approveGateUpdate,
  cancelMissionSignal,
  denyGateUpdate,
  missionEventUpdate,
  missionStartMetadata,
  missionStatusQuery,
  ASK_TOOL_ID,
  BUDGET_TOOL_ID,
  missionWaitKey,
  PLAN_TOOL_ID,
  plannedMissionId,
  type GateCallView,
  type GateDecisionRequest,
  type GateDecisionResult,
  type MissionArgs,
  type MissionResult,
} from './mission-messages.js';
import { admitMissionArgs, inputFailure, parseGateDecision, parseMissionEvent } from './inputs.js';
import { machineFailure, restoreMission } from './mission-restore.js';
import { deliverOrHold, holdInInbox } from './deliver-or-hold.js';
import { turnWorkflow } from './turn-workflow.js';

export * from './mission-messages.js';

const acts = proxyActivities<MissionActivities>(ACTIVITY_POLICIES.mission);
/** The bookkeeping on a mission's way to its gate: quick, idempotent by key, no task through the server. */
type MissionBookkeeping = Pick<MissionActivities, 'openMission' | 'attestStepTurn' | 'openGate' | 'recordMissionEvent'>;
// Local (docs/IDEMPOTENCY.md): their entries are keyed by what they record (missionEntryKey), not by
// sequence number, which a failed workflow task's retry may give to another command (an Update that
// arrived meanwhile schedules one). Local also means no pending activity for anyone to complete.
const localBookkeeping = proxyLocalActivities<MissionBookkeeping>(LOCAL_ACTIVITY_POLICIES.mission);
// Drafting a plan is a model step: the LLM policy (heartbeats, minutes not seconds).
const planning = proxyActivities<Pick<MissionActivities, 'draftMissionPlan'>>(ACTIVITY_POLICIES.llm);

/** Defaults of a mission's gate timers. */
export const GATE_DEFAULTS = { reminderAfter: '24h', expireAfter: '72h' } as const;
const DEFAULT_HISTORY_LIMIT = 4_000;

/** `Omit` that distributes over the audit event union. */
type MissionEventBody = MissionAuditEvent extends infer E ? (E extends MissionAuditEvent ? Omit<E, 'turnId' | 'missionId'> : never) : never;

const names = (list: readonly GateApproverRef[]): string[] => list.map((a) => `${a.identity}@${a.channel}`);

/** The mission workflow: runs every step to the end, waiting durably at gates; continues-as-new with the persisted snapshot. */
export async function missionWorkflow(input: MissionArgs): Promise<MissionResult> {
  // A refused or malformed definition fails now (audited, non-retryably); a forged or copied one fails in openMission.
  const args = await admitMissionArgs(input);
  const def = args.definition;
  const missionId = def.missionId;
  let reminderMs: number;
  let expireMs: number;
  let escalateMs: number | undefined;
  try {
    reminderMs = durationMs(def.reminderAfter ?? GATE_DEFAULTS.reminderAfter);
    expireMs = durationMs(def.expireAfter ?? GATE_DEFAULTS.expireAfter);
    escalateMs = def.escalateAfter !== undefined && (def.secondApprovers?.length ?? 0) > 0 ? durationMs(def.escalateAfter) : undefined;
    checkSteps(def.steps);
  } catch (e) {
    throw inputFailure('mission definition', e instanceof Error ? e.message : String(e));
  }
  const historyLimit = args.historyLimit ?? DEFAULT_HISTORY_LIMIT;
  // Until the definition is verified the status says only that (a query confers nothing; the real one replaces it).
  setHandler(missionStatusQuery, () => ({ missionId, state: 'verifying', step: 0, stepsRun: args.carried?.stepsRun ?? 0 }), {
    description: 'The mission state, current step, steps run and the current gate, if any',
  });
  // Missions started before the bookkeeping went local replay with it remote.
  const books: MissionBookkeeping = patched('mission-bookkeeping-local') ? localBookkeeping : acts;
  // Authority before anything else: nothing of a mission runs unless the worker verified its definition.
  const opened = await books.openMission({
    args,
    ...(workflowInfo().continuedFromExecutionRunId ? { continuedFromRunId: workflowInfo().continuedFromExecutionRunId } : {}),
    ...(workflowInfo().parent ? { parentId: workflowInfo().parent!.workflowId } : {}),
  });
  if (!opened.ok)
    throw ApplicationFailure.create({ type: 'CapabilityDenied', nonRetryable: true, message: `mission refused: ${opened.reason}` });

  let machineError: { which: string; err: unknown } | undefined;
  const mission = restoreMission(args, (err) => (machineError = { which: 'mission', err }));
  let gate: Actor<typeof gateMachine> | undefined;
  let gateView: GateCallView | undefined;
  let gateSeq = args.carried?.gateSeq ?? 0;
  let stepsRun = args.carried?.stepsRun ?? 0;
  // A plan step's drafted plan, from the draft until its approved grant is used (carried through continue-as-new).
  let pendingPlan: unknown = args.carried?.plan;
  // What the step turns spent (summed from their outcomes) and the budget it runs under: the verified
  // definition's or the worker's (openMission), or what an approver last raised it to (carried, attested).
  let spent: Spend = args.carried?.spent ?? NO_SPEND;
  let budget: SpendBudget | undefined = args.carried?.budget ?? opened.budget;
  let cancelState: { reason: string } | undefined;
  // What the person who denied a gate said (for the result only).
  let deniedSaying: string | undefined;
  // Set by the signal handler and by a Temporal cancel; read through a function so narrowing never goes stale.
  const cancelled = (): { reason: string } | undefined => cancelState;

  /** Operator view: current details always; search attributes only when `args.dashboard` (the time-skipping server has none). */
  let published = '';
  let publishedCommands = '';
  // What a wait step waits for (the UI's reason for 'waiting' outside a gate).
  let waitingFor: string | undefined;
  const publish = (): void => {
    const s = mission.getSnapshot();
    const g = gate?.getSnapshot();
    const state = waitingFor && s.value === 'running' ? 'waiting' : String(s.value);
    const openGate = g && g.status === 'active' ? g.context.gateId : undefined;
    const approver = g
      ? g.context.decidedBy
        ? g.context.decidedBy.identity
        : openGate
          ? currentApprovers(g.context)
              .map((a) => a.identity)
              .join(',')
          : undefined
      : undefined;
    // The search attributes (a command) follow exactly the fields they always did, so a history recorded
    // before spend existed replays with the same commands; the details (no command) also show the spend.
    const commandKey = JSON.stringify([state, s.context.step, openGate, g ? String(g.value) : undefined, approver, waitingFor]);
    const key = JSON.stringify([commandKey, spent, budget]);
    if (key === published) return;
    const upsert = commandKey !== publishedCommands;
    published = key;
    publishedCommands = commandKey;
    setCurrentDetails(
      [
        `**Mission** ${missionId}: **${state}**`,
        `- step ${Math.min(s.context.step + 1, def.steps.length)} of ${def.steps.length}, ${stepsRun} run`,
        ...(waitingFor ? [`- waiting: ${waitingFor}`] : []),
        ...(spentAnything(spent) || budget ? [`- spent: ${describeSpendAgainst(spent, budget)}`] : []),
        ...(g
          ? [`- gate \`${g.context.gateId}\` (${String(g.value)}) for \`${g.context.tool}\`${approver ? `; approver: ${approver}` : ''}`]
          : []),
      ].join('\n'),
    );
    if (args.dashboard && upsert) {
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
  // A step turn's end is recorded locally: the child's result is in the history, so a retried workflow
  // task records the same entry. The other transitions stay remote: a timer or a cancel decides them, and
  // a retried task can see them differently (a later clock, a cancel that arrived meanwhile), which a
  // local entry written by the failed attempt would contradict.
  const auditStepTurnEnd = (event: Extract<MissionEventBody, { type: 'MissionStepFinished' }>): Promise<void> =>
    books.recordMissionEvent({ turnId: missionId, missionId, ...event } as MissionAuditEvent);
  // How a gate ended goes to its approvers while the mission moves on: the notice is news, not a step
  // the mission waits for (a round trip off every decision). The mission still ends, or continues as
  // new, only once every notice went out; a notice that could not be sent fails the mission before its
  // next step starts (or at its end), where it used to fail it at the gate.
  const telling: Promise<void>[] = [];
  let tellFailure: unknown;
  const tellOutcome = async (notice: MissionNotice): Promise<void> => {
    if (!patched('gate-outcome-told-alongside')) return acts.notifyApprovers(notice);
    telling.push(
      acts.notifyApprovers(notice).catch((err: unknown) => {
        tellFailure ??= err;
      }),
    );
  };
  const throwIfNoticeFailed = (): void => {
    if (tellFailure !== undefined) throw tellFailure;
  };
  const noticesSent = async (): Promise<void> => {
    await Promise.all(telling.splice(0));
    throwIfNoticeFailed();
  };

  /** Throws (rejecting the update, changing nothing) unless the gate is open and the approver may decide it. */
  const validateDecision = (value: GateDecisionRequest): void => {
    const req = parseGateDecision(value);
    if (!gate || gate.getSnapshot().context.gateId !== req.gateId) throw new Error(`mission ${missionId} has no gate "${req.gateId}"`);
    const snap = gate.getSnapshot();
    if (snap.status !== 'active') throw new Error(`gate ${req.gateId} is closed (${String(snap.value)}): a gate decides once`);
    const why = approverRefusal(snap.context, req.approver);
    if (why) throw new Error(why);
  };
  // Decisions being checked by the worker: the gate does not expire or withdraw under them.
  let deciding = 0;
  const decide =
    (type: 'APPROVE' | 'DENY') =>
    async (req: GateDecisionRequest): Promise<GateDecisionResult> => {
      deciding++;
      try {
        // The gate moves only on a decision the worker verified (proof, approver, first decision).
        const verdict = await acts.verifyGateDecision({ kind: type === 'APPROVE' ? 'approve' : 'deny', request: req });
        if (!verdict.ok)
          throw ApplicationFailure.create({
            type: 'CapabilityDenied',
            nonRetryable: true,
            message: `${type === 'APPROVE' ? 'approval' : 'denial'} refused: ${verdict.reason}`,
          });
        const g = gate;
        if (!g || g.getSnapshot().context.gateId !== req.gateId || g.getSnapshot().status !== 'active') {
          throw ApplicationFailure.create({
            type: 'NotFound',
            nonRetryable: true,
            message: `gate ${req.gateId} closed while the decision was checked`,
          });
        }
        g.send({ type, approver: req.approver, ...(req.reason ? { reason: req.reason } : {}) });
        checked();
        return { gateId: req.gateId, state: String(g.getSnapshot().value) };
      } finally {
        deciding--;
      }
    };
  setHandler(approveGateUpdate, decide('APPROVE'), {
    validator: validateDecision,
    description:
      'Approve the open gate: { gateId, approver, reason?, nonce, proof } — the proof comes from the gateway that authenticated the approver',
  });
  setHandler(denyGateUpdate, decide('DENY'), {
    validator: validateDecision,
    description: 'Deny the open gate: { gateId, approver, reason?, nonce, proof }',
  });
  // The wait a `waitFor` step holds open, and events being checked by the worker (the wait does not time out under them).
  let openWait: { waitKey: string; step: number; arrived: boolean } | undefined;
  let checkingEvents = 0;
  setHandler(
    missionEventUpdate,
    async (req) => {
      const w = openWait!;
      checkingEvents++;
      try {
        // The wait ends only on an event the worker verified (proof, match against the verified step, first event).
        const verdict = await acts.verifyMissionEvent({ definition: def, step: w.step, request: req });
        if (!verdict.ok)
          throw ApplicationFailure.create({ type: 'CapabilityDenied', nonRetryable: true, message: `event refused: ${verdict.reason}` });
        w.arrived = true;
        return { accepted: true as const };
      } finally {
        checkingEvents--;
      }
    },
    {
      validator: (value) => {
        const req = parseMissionEvent(value);
        if (!openWait || openWait.waitKey !== req.waitKey || openWait.arrived)
          throw new Error(`mission ${missionId} is not waiting at ${req.waitKey}`);
      },
      description: 'An inbound event for the open wait: { waitKey, eventId, facts, proof } — the proof comes from the channel adapter',
    },
  );
  setHandler(
    cancelMissionSignal,
    ({ reason }) => {
      cancelState ??= { reason: reason ?? 'mission cancelled' };
    },
    { description: 'Cancel the mission: { reason? }; an open gate is withdrawn and its approvers told' },
  );
  setHandler(
    missionStatusQuery,
    () => {
      const s = mission.getSnapshot();
      const g = gate?.getSnapshot();
      return {
        missionId,
        state: waitingFor && s.value === 'running' ? 'waiting' : String(s.value),
        step: s.context.step,
        stepsRun,
        ...(waitingFor ? { waiting: waitingFor } : {}),
        ...(spentAnything(spent) ? { spent } : {}),
        ...(budget ? { budget } : {}),
        ...(g
          ? {
              gate: {
                gateId: g.context.gateId,
                state: String(g.value),
                tool: g.context.tool,
                inputHash: g.context.inputHash,
                approvers: g.context.approvers.slice(),
                ...gateView,
              },
            }
          : {}),
      };
    },
    { description: 'The mission state, current step, steps run and the current gate, if any' },
  );
  // A Temporal cancel of the mission means the same as the signal.
  CancellationScope.current().cancelRequested.catch(() => {
    cancelState ??= { reason: 'mission cancelled' };
  });

  /**
   * A plan step. First run: the model drafts the plan (checked by the worker), and the step
   * "escalates" with it, so the plan gate shows the whole plan before anything runs. Run with the
   * gate's grant: the worker builds and attests the planned mission from exactly the approved plan,
   * and it runs as a child (its own steps, gates and audit trail); a cancel here is passed on to it.
   */
  async function runPlanStep(step: number, grant: StepGrant | undefined): Promise<TurnOutcome> {
    if (!grant) {
      const drafted = await planning.draftMissionPlan({ definition: def, step });
      if (!drafted.ok) return { status: 'Failed', error: { kind: 'InvalidScope', message: drafted.reason }, toolCallsMade: 0 };
      pendingPlan = drafted.plan;
      return {
        status: 'Escalated',
        reason: 'the plan needs approval before any of it runs',
        pendingTool: PLAN_TOOL_ID,
        pendingInput: drafted.plan,
        toolCallsMade: 0,
      };
    }
    const planned = await acts.adoptMissionPlan({ definition: def, step, grant, plan: pendingPlan });
    pendingPlan = undefined;
    const childId = planned.definition.missionId;
    let child: ChildWorkflowHandle<typeof missionWorkflow>;
    try {
      child = await startChild(missionWorkflow, {
        workflowId: childId,
        args: [{ ...planned, ...(args.dashboard ? { dashboard: true } : {}) }],
        ...missionStartMetadata(planned.definition),
      });
    } catch (e) {
      // Its id already taken (someone started a workflow under it first): the plan does not run; the mission ends cleanly.
      return {
        status: 'Failed',
        error: {
          kind: 'Internal',
          message: `the planned mission ${childId} could not start: ${e instanceof Error ? e.message : String(e)}`,
        },
        toolCallsMade: 0,
      };
    }
    waitingFor = `the planned mission ${childId}`;
    publish();
    let ended: MissionResult | { failure: string } | undefined;
    child.result().then(
      (r) => (ended = r),
      (e: unknown) => (ended = { failure: e instanceof Error ? e.message : String(e) }),
    );
    await condition(() => ended !== undefined || cancelled() !== undefined);
    const c = cancelled();
    if (!ended && c) {
      await child.signal(cancelMissionSignal, { reason: c.reason });
      await condition(() => ended !== undefined);
    }
    waitingFor = undefined;
    publish();
    const end = ended!;
    if ('state' in end && end.state === 'completed') return { status: 'Completed', finalMessage: '', toolCallsMade: 0, durationMs: 0 };
    const why = 'state' in end ? `${end.state}${end.reason ? `: ${end.reason}` : ''}` : end.failure;
    return { status: 'Failed', error: { kind: 'Internal', message: `the planned mission ${childId} ended ${why}` }, toolCallsMade: 0 };
  }

  /**
   * The budget gate: the mission has used its spend budget up, so before step `step` spends more an
   * approver is asked to raise it. Approved: the worker confirms the raise and the mission goes on;
   * denied or expired: the mission fails; withdrawn (a cancel): the loop ends it.
   */
  async function budgetGate(step: number, current: SpendBudget, usedUp: string): Promise<void> {
    const raise = { spent, budget: current, raiseTo: raisedBudget(current, spent) };
    waitingFor = 'an approver to raise the spend budget';
    const ended = await awaitGate(
      step,
      {
        tool: BUDGET_TOOL_ID,
        input: raise,
        reason: `this mission has used ${usedUp}; raise it to ${describeBudget(raise.raiseTo)}?`,
        expireMs,
        expiredText: 'no answer in time: the spend budget stays as it was and the mission ends',
      },
      () => checked(),
    );
    gate = undefined;
    gateView = undefined;
    waitingFor = undefined;
    if (ended.value === 'approved') {
      // The worker confirms the approval (it refuses a forged one); the budget is the one the gate showed
      // the approver, never what an activity result says.
      await acts.raiseMissionBudget({ definition: def, gateId: ended.gateId, raise });
      budget = raise.raiseTo;
    } else if (ended.value === 'denied' || ended.value === 'expired') {
      deniedSaying = ended.reason;
      const why = ended.value === 'denied' ? `denied by ${ended.by?.identity ?? '?'} on ${ended.by?.channel ?? '?'}` : 'the gate expired';
      mission.send({ type: 'STEP_FAILED', reason: `the spend budget was used up (${usedUp}) and not raised: ${why}` });
    }
    checked();
  }

  /** A gate's end: how it was decided, and by whom (the decision's words are the denier's, for the result only). */
  interface GateEnd {
    value: string;
    gateId: string;
    tool: string;
    inputHash: string;
    by: { identity: string; channel: string } | undefined;
    reason: string | undefined;
  }

  /**
   * Opens a gate for exactly one pending call and waits durably until it is decided (only by the
   * decision Updates), expires (after `expireMs`) or is withdrawn (a cancel), reminding and escalating
   * on the way; everyone asked is told how it ended. The caller moves the mission.
   */
  async function awaitGate(
    step: number,
    pending: { tool: string; input: unknown; reason: string; expireMs: number; expiredText: string },
    onOpened: (gateId: string) => void,
    // Local only for a step turn's escalation, which its child's result decides; a budget gate or an
    // approval wait follows a check a cancel arriving on a retried task could turn the other way.
    open: MissionBookkeeping['openGate'] = acts.openGate,
  ): Promise<GateEnd> {
    gateSeq++;
    const gateId = `${missionId}/gate-${gateSeq}`;
    const opened = await open({
      definition: def,
      gateId,
      step,
      tool: pending.tool,
      input: pending.input ?? null,
    });
    const { inputHash } = opened;
    // Who decides is the worker's answer (after untrusted content: the owners only); a history
    // recorded before it answered this asked the definition's approvers.
    const approvers = opened.approvers ?? def.approvers;
    const secondApprovers = opened.approvers ? opened.secondApprovers : def.secondApprovers;
    // A gate with no one to escalate to (an owners-only gate) never escalates.
    const escalatesMs = secondApprovers && secondApprovers.length > 0 ? escalateMs : undefined;
    gate = createActor(gateMachine, {
      input: {
        gateId,
        tool: pending.tool,
        inputHash,
        approvers,
        ...(secondApprovers && secondApprovers.length > 0 ? { secondApprovers } : {}),
        ...(opened.ownersOnly ? { ownersOnly: true } : {}),
      },
    });
    gate.subscribe({ error: (err) => (machineError = { which: 'gate', err }) });
    gate.start();
    onOpened(gateId);
    const openedAt = Date.now();
    // What every notice of this gate says about it (channels that show a full request use these).
    // The call is rendered here, once (bounded lines, secrets redacted), never shipped raw to every notice.
    const about = {
      goal: def.goal,
      tool: pending.tool,
      inputHash,
      // An owners-only gate says why its approvers are the owners and not whoever asked.
      why: opened.ownersOnly ? `${pending.reason}. ${OWNERS_ONLY_NOTE}` : pending.reason,
      deadline: openedAt + pending.expireMs,
      call: describeCall(pending.tool, pending.input).lines,
      askedBy: { identity: def.channel.sender, channel: def.channel.name },
    };
    gateView = { call: about.call, why: about.why, askedBy: about.askedBy };
    await acts.notifyApprovers({
      missionId,
      gateId,
      kind: 'opened',
      approvers,
      text: `${pending.tool} needs approval: ${pending.reason}`,
      ...about,
    });

    const g = gate;
    let reminded = false;
    let escalated = false;
    // Everyone who was asked about this gate (second approvers only once it escalated).
    const allTold = () => [...approvers, ...(escalated ? (secondApprovers ?? []) : [])];
    const isDecided = () => g.getSnapshot().status !== 'active';
    while (!isDecided()) {
      const due = Math.min(
        reminded ? Infinity : openedAt + reminderMs,
        escalated || escalatesMs === undefined ? Infinity : openedAt + escalatesMs,
        openedAt + pending.expireMs,
      );
      const woke = await condition(() => isDecided() || cancelled() !== undefined, Math.max(1, due - Date.now()));
      if (isDecided()) break;
      const c = cancelled();
      if (c) {
        // A decision the worker is checking right now settles first.
        await condition(() => deciding === 0);
        if (isDecided()) break;
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
      if (!escalated && escalatesMs !== undefined && now >= openedAt + escalatesMs) {
        escalated = true;
        fire.push({ type: 'ESCALATE' });
      }
      if (now >= openedAt + pending.expireMs) fire.push({ type: 'EXPIRE' });
      for (const e of fire) {
        if (e.type === 'EXPIRE') break;
        g.send(e);
        checked();
        if (e.type === 'REMIND') {
          await audit({ type: 'GateReminded', gateId, afterMs: now - openedAt });
          await acts.notifyApprovers({
            missionId,
            gateId,
            kind: 'reminder',
            approvers,
            text: `still waiting for a decision on ${pending.tool}`,
            ...about,
          });
        } else {
          const all = [...approvers, ...(secondApprovers ?? [])];
          await audit({ type: 'GateEscalated', gateId, approvers: names(all), afterMs: now - openedAt });
          await acts.notifyApprovers({
            missionId,
            gateId,
            kind: 'escalated',
            approvers: secondApprovers ?? [],
            text: `escalated to you: ${pending.tool} needs approval`,
            ...about,
          });
        }
      }
      // Expiry last, and only if no decision arrived meanwhile (an update may have landed during the awaits,
      // or be under verification right now: that one settles first).
      if (fire.some((e) => e.type === 'EXPIRE')) {
        await condition(() => deciding === 0);
        if (!isDecided()) g.send({ type: 'EXPIRE' });
      }
    }
    checked();

    const decided = g.getSnapshot();
    const by = decided.context.decidedBy;
    const reason = decided.context.reason;
    switch (decided.value) {
      // GateApproved / GateDenied were audited by the activity that verified the decision.
      case 'approved':
        await tellOutcome({
          missionId,
          gateId,
          kind: 'decided',
          approvers: allTold(),
          text: `approved by ${by?.identity ?? '?'}@${by?.channel ?? '?'}`,
          ...about,
        });
        break;
      case 'denied':
        await tellOutcome({
          missionId,
          gateId,
          kind: 'decided',
          approvers: allTold(),
          text: `denied by ${by?.identity ?? '?'}@${by?.channel ?? '?'}${reason ? `: ${reason}` : ''}`,
          ...about,
        });
        break;
      case 'expired':
        await audit({ type: 'GateExpired', gateId, afterMs: Date.now() - openedAt });
        await tellOutcome({
          missionId,
          gateId,
          kind: 'expired',
          approvers,
          text: pending.expiredText,
          ...about,
        });
        break;
      case 'withdrawn':
        await audit({ type: 'GateWithdrawn', gateId });
        await tellOutcome({
          missionId,
          gateId,
          kind: 'withdrawn',
          approvers: allTold(),
          text: `withdrawn: ${reason ?? 'mission cancelled'}`,
          ...about,
        });
        break;
    }
    return { value: decided.value, gateId, tool: decided.context.tool, inputHash: decided.context.inputHash, by, reason };
  }

  return CancellationScope.nonCancellable(async (): Promise<MissionResult> => {
    publish();
    if (!args.carried) {
      mission.send({ type: 'START' });
      checked();
    }
    let stepsThisRun = 0;
    // A confirmation mission starts at its gate: the asking turn's escalation stands in for step 1's first run.
    let seeded = !args.carried ? def.pendingGate : undefined;

    while (mission.getSnapshot().status === 'active') {
      throwIfNoticeFailed();
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
        await noticesSent();
        const carried = {
          snapshot: mission.getPersistedSnapshot(),
          gateSeq,
          stepsRun,
          ...(pendingPlan !== undefined ? { plan: pendingPlan } : {}),
          ...(budget ? { budget } : {}),
          ...(spentAnything(spent) ? { spent } : {}),
        };
        // The next run proves it continues this verified one (a copy of these arguments started fresh proves nothing).
        const continuation = await acts.attestContinuation({ definition: def, carried });
        return continueAsNew<typeof missionWorkflow>({ ...args, carried, continuation });
      }

      // Run step k as a child turn, attested by the worker (the workflow holds no key).
      const { step, attempt, grant } = snap.context;
      const stepDef = def.steps[step];
      // A step that may spend (a turn, a plan) waits while the budget is used up, until an approver raises it.
      const usedUp = stepDef && (isTurnStep(stepDef) || stepDef.kind === 'plan') && !seeded ? budgetUsedUp(spent, budget) : undefined;
      if (usedUp && budget && patched('mission-spend-budget')) {
        await budgetGate(step, budget, usedUp);
        continue;
      }
      if (stepDef && !isTurnStep(stepDef) && stepDef.kind !== 'plan' && !seeded) {
        // A wait or a notice: no turn, no tools, nothing to escalate.
        const stepId = `${missionId}/step-${step}`;
        let outcome = stepDef.kind === 'wait' ? 'Waited' : 'Notified';
        let ends = false;
        let failure: string | undefined;
        if (stepDef.kind === 'waitFor') {
          const until = Date.now() + durationMs(stepDef.within);
          const waitKey = missionWaitKey(missionId, step);
          let gateId: string | undefined;
          let arrived = false;
          if (stepDef.event.source === 'approval') {
            // A gate-like approval: a gate for the question; a verified approver's yes is the event, a no or silence the timeout.
            await acts.openWait({ definition: def, step, until });
            const question = stepDef.event.question;
            waitingFor = `${eventLabel(stepDef.event)} from an approver`;
            const ended = await awaitGate(
              step,
              {
                tool: ASK_TOOL_ID,
                input: { question },
                reason: question,
                expireMs: Math.max(1, until - Date.now()),
                expiredText: 'no answer in time: the mission goes on as if the answer were no',
              },
              () => checked(),
            );
            gateId = ended.gateId;
            gate = undefined;
            gateView = undefined;
            arrived = ended.value === 'approved';
            if (ended.value === 'withdrawn') {
              waitingFor = undefined;
              publish();
              continue;
            }
          } else {
            // Open before the index row exists, so an event that comes at once finds the wait open.
            const w = (openWait = { waitKey, step, arrived: false });
            await acts.openWait({ definition: def, step, until });
            waitingFor = `${eventLabel(stepDef.event)}, until ${new Date(until).toISOString()}`;
            publish();
            await condition(() => w.arrived || cancelled() !== undefined, Math.max(1, until - Date.now()));
            // An event the worker is checking right now settles first.
            await condition(() => checkingEvents === 0);
            openWait = undefined;
            await acts.closeWait({ definition: def, step });
            arrived = w.arrived;
            if (cancelled() && !arrived) {
              waitingFor = undefined;
              publish();
              continue;
            }
          }
          waitingFor = undefined;
          publish();
          // The worker decides the branch from what it recorded (a forged completion cannot choose it), and later steps check it.
          const branch = await acts.settleWait({ definition: def, step, ...(gateId ? { gateId } : {}) });
          outcome = branch === 'event' ? 'EventArrived' : 'TimedOut';
          ends = (branch === 'event' ? (stepDef.onEvent ?? 'continue') : (stepDef.onTimeout ?? 'end')) === 'end';
        } else if (stepDef.kind === 'wait') {
          const until = waitEndsAt(stepDef, Date.now());
          waitingFor = `a timer until ${new Date(until).toISOString()} (${stepLabel(stepDef)})`;
          publish();
          await condition(() => cancelled() !== undefined, Math.max(1, until - Date.now()));
          waitingFor = undefined;
          publish();
          if (cancelled()) continue;
        } else if (stepDef.kind === 'notify' && stepDef.to) {
          // To the people it names, on their channels: the worker checks the mission may send there.
          failure = await acts.sendMissionNotice({ definition: def, step }).then(
            () => undefined,
            (e: unknown) => (e instanceof ActivityFailure && e.cause instanceof Error ? e.cause.message : String(e)),
          );
          if (failure) outcome = 'Failed';
        } else {
          const reply = {
            turnId: `${stepId}/notice`,
            channel: def.channel,
            messageId: `${stepId}/notice`,
            outcome: { status: 'Completed' as const, finalMessage: stepDef.text, toolCallsMade: 0, durationMs: 0 },
          };
          // Delivered on the channel the mission came from; a mission with no route (the CLI) leaves it in the inbox.
          if (def.replyRoute) await deliverOrHold({ ...reply, route: def.replyRoute });
          else await holdInInbox(reply, `a notice from mission ${missionId}`);
        }
        stepsRun++;
        stepsThisRun++;
        await audit({ type: 'MissionStepFinished', step, attempt, stepTurnId: stepId, outcome });
        mission.send(failure ? { type: 'STEP_FAILED', reason: failure } : { type: ends ? 'FINISH' : 'STEP_DONE' });
        checked();
        continue;
      }
      let outcome: TurnOutcome;
      // Whether a child's result (in the history) decided this outcome, rather than the definition's seed.
      const fromChild = !seeded;
      if (seeded) {
        outcome = { status: 'Escalated', reason: seeded.reason, pendingTool: seeded.tool, pendingInput: seeded.input, toolCallsMade: 0 };
        await audit({ type: 'MissionStepFinished', step, attempt, stepTurnId: seeded.turnId, outcome: outcome.status });
        seeded = undefined;
      } else if (stepDef?.kind === 'plan') {
        outcome = await runPlanStep(step, grant);
        stepsRun++;
        stepsThisRun++;
        await auditStepTurnEnd({
          type: 'MissionStepFinished',
          step,
          attempt,
          stepTurnId: plannedMissionId(missionId),
          outcome: outcome.status,
        });
      } else {
        // The worker builds and attests the step's request from the verified definition (the workflow holds no key).
        // After an approval the attestation is remote: a local activity would hold the workflow task that
        // answers the approver's Update open until it finished.
        const request = await (grant ? acts : books).attestStepTurn({ definition: def, step, attempt, ...(grant ? { grant } : {}) });
        const turnId = request.turnId;
        outcome = await runStepTurn(request);
        spent = addSpend(spent, outcome.spend);
        stepsRun++;
        stepsThisRun++;
        await auditStepTurnEnd({ type: 'MissionStepFinished', step, attempt, stepTurnId: turnId, outcome: outcome.status });
      }

      if (outcome.status === 'Completed') {
        mission.send({ type: 'STEP_DONE' });
        checked();
        continue;
      }
      if (outcome.status !== 'Escalated') {
        const reason =
          outcome.status === 'Failed' ? `${outcome.error.kind}: ${outcome.error.message}` : `step turn ended ${outcome.status}`;
        mission.send({ type: 'STEP_FAILED', reason });
        checked();
        continue;
      }

      // Escalated: a gate for exactly this pending call.
      const ended = await awaitGate(
        step,
        {
          tool: outcome.pendingTool,
          input: outcome.pendingInput,
          reason: outcome.reason,
          expireMs,
          expiredText: `the gate expired; the mission ${def.onExpire === 'fail' ? 'ends' : 'skips the step'}`,
        },
        (gateId) => {
          mission.send({ type: 'STEP_ESCALATED', gateId });
          checked();
        },
        fromChild ? books.openGate : acts.openGate,
      );
      switch (ended.value) {
        case 'approved':
          mission.send({ type: 'GATE_APPROVED', grant: { gateId: ended.gateId, tool: ended.tool, inputHash: ended.inputHash } });
          break;
        case 'denied':
          // The denier's own words go to the mission's result, not into its failure (and so not into
          // MissionEnded): the audit log holds no user text.
          deniedSaying = ended.reason;
          mission.send({ type: 'GATE_DENIED', reason: `gate denied by ${ended.by?.identity ?? '?'} on ${ended.by?.channel ?? '?'}` });
          break;
        case 'expired':
          mission.send({ type: 'GATE_EXPIRED' });
          break;
        case 'withdrawn':
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
      ...(spentAnything(spent) ? { spent } : {}),
      ...(end.context.failure
        ? { reason: `${end.context.failure}${deniedSaying ? `: ${deniedSaying}` : ''}` }
        : cancelled()
          ? { reason: cancelled()?.reason ?? '' }
          : {}),
    };
    await noticesSent();
    publish();
    // A cancel's reason is a person's text: the audit gets only the mission's own (system) failure reason.
    await audit({
      type: 'MissionEnded',
      state: result.state,
      ...(end.context.failure ? { reason: end.context.failure } : {}),
      ...(spentAnything(spent) ? spendFields(spent) : {}),
    });
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
