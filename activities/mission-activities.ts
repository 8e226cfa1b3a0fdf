/**
 * The mission workflow's activities. Authority first (DESIGN.md D5): `openMission` checks the
 * definition's proof and claims it for this run (or takes it over from the verified run this one
 * continues); every later step — attesting a step turn, opening a gate, checking a decision, handing
 * over to the next run — works only for the run that holds that claim, and builds what it attests
 * from the verified definition, never from what the workflow hands it. Audit appends are keyed by
 * `activityKey()` when the activity is remote and by what they record when it is local (`missionEntryKey`);
 * notifications are best-effort and deduplicated by the notifier.
 */
import { AivyxError } from '../core/errors.js';
import type { SpendBudget } from '../core/spend.js';
import type { AuditEvent } from '../core/audit-events.js';
import type { GateDecisionBody, MissionContinuationBody, MissionEventProofBody } from '../core/authority.js';
import { channelTrustTier } from '../core/capability/index.js';
import type { OneShotGrant, TurnRequest } from '../core/channel.js';
import { textContent } from '../core/message.js';
import { APPROVING_TIERS, eventMatches, isTurnStep, type GateApproverRef, type StepGrant } from '../machines/index.js';
import {
  ASK_TOOL_ID,
  BUDGET_TOOL_ID,
  missionWaitKey,
  type BudgetRaise,
  type GateDecisionRequest,
  type MissionArgs,
  type MissionDefinition,
  type MissionEventRequest,
  type ScheduledMissionArgs,
} from '../workflows/mission-messages.js';
import type { ChannelEvent } from '../core/channel.js';
import { Context } from '@temporalio/activity';
import { errorData, toApplicationFailure } from './failure.js';
import type { LlmProvider } from './llm/llm-provider.js';
import type { ChannelSender } from './tools/channel-send.js';
import { CapabilitySet } from '../core/capability/index.js';
import { checkPlan, draftPlan, PLAN_TOOL, plannedMission, type MissionPlan } from './mission-plan.js';
import { activityKey, bookkeepingKey, currentExecution, inputHash } from './turn-activities.js';
import type { AuditPort, ClaimPort, MissionWaitsPort, ProofPort, ToolCallLogPort } from './ports.js';
import { gateAskerOf, gateApproversFor, taintGateRefusal } from '../core/gate-approvers.js';

/** Who is told about a gate. */
export interface MissionNotice {
  missionId: string;
  gateId: string;
  kind: 'opened' | 'reminder' | 'escalated' | 'withdrawn' | 'decided' | 'expired';
  approvers: { identity: string; channel: string }[];
  text: string;
  /** What the gate is about, for channels that show a full request (Telegram, email). */
  goal?: string;
  tool?: string;
  /** SHA-256 of the pending call's canonical input (its digest, never the input). */
  inputHash?: string;
  /** Why the call needs approval (the tool's escalation reason). */
  why?: string;
  /** Epoch ms when the gate expires. */
  deadline?: number;
  /** The pending call as `describeCall` renders it (canonical input, secrets redacted, long values cut). */
  call?: string[];
  /** Who asked for the call, on which channel (the mission's channel facts). */
  askedBy?: { identity: string; channel: string };
}

/** Tells approvers about a gate (see `routingMissionNotifier`). Must tolerate repeats of one `idemKey`. */
export interface MissionNotifier {
  notify(notice: MissionNotice, idemKey: string): Promise<void>;
}

/** The mission audit events (the mission kinds of `AuditEvent`). */
export type MissionAuditEvent = Extract<AuditEvent, { missionId: string }>;

/** Everything the mission activities need. */
export interface MissionActivityDeps {
  audit: AuditPort;
  /** Checks definition, continuation and decision proofs; attests step turns (never the workflow). */
  proofs: ProofPort;
  claims: ClaimPort;
  notifier: MissionNotifier;
  /** What the Temporal Schedules say they started (recurring missions); none: scheduled runs are refused. */
  schedules?: ScheduleRecordPort;
  /** The index of open waits the channel adapters read; none: a `waitFor` step can only time out. */
  waits?: MissionWaitsPort;
  /** The model that drafts plans (plan steps); none: a plan step fails saying so. */
  llm?: LlmProvider;
  /** Channels' `send` (notices to other people); none: such a notice fails saying so. */
  sender?: ChannelSender;
  /** The spend budget of missions whose definition names none (AIVYX_MISSION_*_BUDGET); none: no limit. */
  missionBudget?: SpendBudget;
  /** The tool-call log: why a step's call was gated (after untrusted content, only owners decide). */
  toolCalls?: Pick<ToolCallLogPort, 'callTaint'>;
  /** The owner's identities on remote channels (`AIVYX_OWNER_IDS`); the local owner is always one. */
  owners?: readonly string[];
}

/** The Schedules' own record of what they started (the server's, not the workflow's word). */
export interface ScheduleRecordPort {
  /**
   * Why schedule `scheduleId` does not vouch for run `runId` of `workflowId`, or undefined when it
   * does: it started exactly that run, and it was created when its template was signed (`signedAt`)
   * — a schedule re-created later under a deleted one's id, with a copied template, vouches for nothing.
   */
  refusal(scheduleId: string, workflowId: string, runId: string, signedAt: number): Promise<string | undefined>;
}

/** The mission id of one scheduled run: the schedule id and the run's scheduled time, as id characters. */
export function scheduledRunMissionId(scheduleId: string, workflowId: string): string {
  return `${scheduleId}-run-${workflowId.slice(scheduleId.length + 1).replace(/[^0-9A-Za-z]/g, '')}`;
}

/** What a verified mission's claim holds. */
export interface MissionAuthority {
  /** SHA-256 of the canonical definition that was verified. */
  definitionHash: string;
}

/** What a gate's claim holds: the exact call it is about and who may decide it. */
export interface GateAuthority {
  missionId: string;
  tool: string;
  inputHash: string;
  approvers: GateApproverRef[];
  secondApprovers: GateApproverRef[];
  /** The untrusted sources the call followed: only owners may decide it (core/gate-approvers.ts). */
  taintedBy?: string[];
}

/** What `openGate` answers: the call's digest and who the worker says may decide it. */
export interface OpenedGate {
  inputHash: string;
  approvers: GateApproverRef[];
  secondApprovers: GateApproverRef[];
  /** Only owners decide: the call follows untrusted content. */
  ownersOnly?: true;
}

/** How a wait ended, as the worker decided it (settleWait). */
export type WaitBranchTaken = 'event' | 'timeout';
/** What a wait's opening claim holds: when it times out (the server's clock). */
interface WaitOpened {
  until: number;
}
/** What a wait's outcome claim holds. */
interface WaitOutcome {
  branch: WaitBranchTaken;
}

/** What a decision's claim holds. */
export interface DecisionAuthority {
  kind: 'approve' | 'deny';
  approver: { identity: string; channel: string; trustTier: string };
  nonce: string;
}

/** How `openMission` and `verifyGateDecision` answer: go, or why not (already audited). */
export type Verdict = { ok: true } | { ok: false; reason: string };

/** How `openMission` answers: a verdict, and when it goes, the spend budget the mission starts with. */
export type OpenMissionVerdict = { ok: true; budget?: SpendBudget } | { ok: false; reason: string };

/** A notifier that publishes notices on a stream (the StreamHub's `publish`), keyed by mission id. */
export function streamMissionNotifier(publish: (key: string, event: ChannelEvent) => void): MissionNotifier {
  return {
    async notify(notice) {
      publish(notice.missionId, {
        type: 'status',
        text: `[gate ${notice.gateId}] ${notice.kind}: ${notice.text} → ${notice.approvers.map((a) => `${a.identity}@${a.channel}`).join(', ')}`,
      });
    },
  };
}

/** The SHA-256 of a person's text (the audit log keeps no user text). */
export function textHash(text: string): string {
  return inputHash(text);
}

/** The body of a gate decision's proof. */
export function gateDecisionBody(missionId: string, kind: 'approve' | 'deny', req: Omit<GateDecisionRequest, 'proof'>): GateDecisionBody {
  return {
    missionId,
    gateId: req.gateId,
    kind,
    approver: { identity: req.approver.identity, channel: req.approver.channel, trustTier: req.approver.trustTier },
    ...(req.reason ? { reasonHash: textHash(req.reason) } : {}),
    nonce: req.nonce,
  };
}

const ENTRY_IDENTITY = ['gateId', 'step', 'attempt', 'stepTurnId'] as const;
/** The entries local activities may write: the ones `missionEntryKey` names uniquely within a run. */
const LOCAL_ENTRIES: ReadonlySet<MissionAuditEvent['type']> = new Set([
  'MissionStarted',
  'MissionRejected',
  'MissionStepFinished',
  'GateOpened',
]);

/**
 * What names one mission entry within its run, for a local activity's key: its type and the gate,
 * step, attempt or step turn it is about — never a time or a count a retried workflow task
 * could see differently. It is unique only for what runs locally (`LOCAL_ENTRIES`): a run starts
 * once, opens a gate once, and finishes a step attempt once; a remote activity keys by activity id.
 */
export function missionEntryKey(event: MissionAuditEvent): string {
  const fields = event as Partial<Record<(typeof ENTRY_IDENTITY)[number], unknown>>;
  return [event.type, ...ENTRY_IDENTITY.filter((k) => fields[k] !== undefined).map((k) => `${k}=${String(fields[k])}`)].join('/');
}

/** Builds the mission activities. */
export function createMissionActivities(deps: MissionActivityDeps) {
  // Converted here so an integrity alarm (kind Audit) fails the mission instead of being retried forever;
  // a database that is down stays retryable.
  const audit = (event: MissionAuditEvent): Promise<unknown> =>
    deps.audit.append(bookkeepingKey(missionEntryKey(event)), event).catch((e: unknown) => {
      throw toApplicationFailure(e);
    });
  const same = (a: GateApproverRef, b: GateApproverRef): boolean => a.identity === b.identity && a.channel === b.channel;
  const owners = deps.owners ?? [];

  /** The verified definition this run holds, or a CapabilityDenied failure (the workflow's own input was not verified). */
  async function heldMission(def: MissionDefinition): Promise<MissionAuthority> {
    const { workflowId, runId } = currentExecution();
    const held = await deps.claims.read<MissionAuthority>('mission', workflowId);
    if (def.missionId !== workflowId || !held || held.runId !== runId || held.data.definitionHash !== inputHash(def)) {
      throw toApplicationFailure(
        new AivyxError('CapabilityDenied', `mission ${workflowId}: this run holds no verified definition`, {
          hint: 'a mission runs only what openMission verified',
        }),
      );
    }
    return held.data;
  }

  /** The grant, when its gate in this mission was opened for exactly that call and approved; else a CapabilityDenied failure. */
  async function approvedGrant(def: MissionDefinition, g: StepGrant): Promise<OneShotGrant> {
    const gate = await deps.claims.read<GateAuthority>('gate', g.gateId);
    const decision = await deps.claims.read<DecisionAuthority>('gate-decision', g.gateId);
    const genuine =
      gate?.workflowId === def.missionId &&
      gate.data.tool === g.tool &&
      gate.data.inputHash === g.inputHash &&
      decision?.workflowId === def.missionId &&
      decision.data.kind === 'approve';
    if (!genuine)
      throw toApplicationFailure(
        new AivyxError('CapabilityDenied', `mission ${def.missionId}: gate ${g.gateId} did not approve ${g.tool} with that input`),
      );
    return { missionId: def.missionId, gateId: g.gateId, tool: g.tool, inputHash: g.inputHash };
  }

  /**
   * Checks that step `step` of the verified mission may run: every `waitFor` before it ended — as
   * the worker recorded it (settleWait), not as the workflow says — on a branch that goes on. A
   * forged activity completion can make the workflow believe a wait ended; it cannot get past here.
   */
  /**
   * Why a gate's call needs the owners, from this worker's own records: the definition's own taint
   * (a worker-built mission born of untrusted content) and what runTool recorded when the step's
   * turns (or the confirmed turn) asked for this exact call.
   */
  async function gateTaint(def: MissionDefinition, step: number, tool: string, hash: string): Promise<string[]> {
    const turns = [`${def.missionId}/step-${step}`, ...(def.pendingGate ? [def.pendingGate.turnId] : [])];
    const recorded = (await deps.toolCalls?.callTaint(turns, tool, hash)) ?? [];
    return [...new Set([...(def.taintedBy ?? []), ...recorded])];
  }

  async function reachable(def: MissionDefinition, step: number): Promise<void> {
    await heldMission(def);
    for (let j = 0; j < step; j++) {
      const s = def.steps[j];
      if (s?.kind !== 'waitFor') continue;
      const out = await deps.claims.read<WaitOutcome>('wait-outcome', missionWaitKey(def.missionId, j));
      const refuse = (why: string) =>
        toApplicationFailure(new AivyxError('CapabilityDenied', `mission ${def.missionId}: step ${step + 1} may not run: ${why}`));
      if (out?.workflowId !== def.missionId) throw refuse(`the wait at step ${j + 1} has no outcome the worker recorded`);
      if ((out.data.branch === 'event' ? (s.onEvent ?? 'continue') : (s.onTimeout ?? 'end')) === 'end')
        throw refuse(`the mission ended at step ${j + 1}`);
    }
  }

  /** Step `step` of the verified definition, when it is a plan step; else an Internal failure. */
  async function planStepOf(def: MissionDefinition, step: number): Promise<void> {
    await reachable(def, step);
    if (def.steps[step]?.kind !== 'plan')
      throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no plan step ${step}`));
  }

  return {
    /**
     * Asks the model for the plan of a mission that starts from its goal (its plan step), and checks
     * it like any model-drafted mission, within the capabilities the mission holds. A plan that does
     * not pass is the step's failure (nothing runs); the model's own failures are retried.
     */
    async draftMissionPlan(input: {
      definition: MissionDefinition;
      step: number;
    }): Promise<{ ok: true; plan: MissionPlan } | { ok: false; reason: string }> {
      const def = input.definition;
      await planStepOf(def, input.step);
      if (!deps.llm) return { ok: false, reason: 'this worker has no model to plan with' };
      const ctx = Context.current();
      const drafted = await draftPlan(deps.llm, def, ctx.cancellationSignal, () => ctx.heartbeat());
      try {
        return { ok: true, plan: checkPlan(drafted, def) };
      } catch (e) {
        if (e instanceof AivyxError) return { ok: false, reason: `the plan was refused: ${e.message}` };
        throw e;
      }
    },

    /**
     * The planned mission, once the plan gate approved exactly this plan: checked again (within what
     * the mission holds), built from the verified definition, and attested here for its own workflow.
     */
    async adoptMissionPlan(input: { definition: MissionDefinition; step: number; grant: StepGrant; plan: unknown }): Promise<MissionArgs> {
      const def = input.definition;
      await planStepOf(def, input.step);
      const grant = await approvedGrant(def, input.grant);
      if (grant.tool !== PLAN_TOOL.id || grant.inputHash !== inputHash(input.plan))
        throw toApplicationFailure(new AivyxError('CapabilityDenied', `gate ${grant.gateId} did not approve this plan`));
      let plan: MissionPlan;
      try {
        plan = checkPlan(input.plan, def);
      } catch (e) {
        throw toApplicationFailure(e);
      }
      const planned = plannedMission(def, plan);
      return { definition: planned, proof: deps.proofs.seal('mission', planned.missionId, planned) };
    },

    /**
     * Checks the definition's proof and its binding to this workflow, then claims it for this run
     * (a fresh start) or takes the claim over from the verified run this one continues; audits
     * `MissionStarted` or `MissionRejected`.
     */
    async openMission(input: { args: MissionArgs; continuedFromRunId?: string; parentId?: string }): Promise<OpenMissionVerdict> {
      const { workflowId, runId } = currentExecution();
      const { definition: def, proof, carried, continuation } = input.args;
      // The verified definition's own budget, else this worker's default (a continued run carries what approvers raised it to).
      const budget = def.budget ?? deps.missionBudget;
      const go: OpenMissionVerdict = budget ? { ok: true, budget } : { ok: true };
      const reject = async (reason: string): Promise<Verdict> => {
        await audit({ type: 'MissionRejected', turnId: workflowId, missionId: workflowId, reason });
        return { ok: false, reason };
      };
      if (def.missionId !== workflowId)
        return reject(`the definition is for mission "${def.missionId}" but was started as workflow "${workflowId}" (a copied definition)`);
      const verdict = deps.proofs.check('mission', workflowId, def, proof);
      if (!verdict.ok) return reject(`definition: ${verdict.reason}`);
      // A planned mission runs only as the child of the mission that planned it (the server names the parent).
      if (def.plannedFrom !== undefined && input.parentId !== def.plannedFrom)
        return reject(`a planned mission runs only as the child of ${def.plannedFrom}`);
      let tier;
      try {
        tier = channelTrustTier(def.channel.trustTier);
      } catch (e) {
        return reject(errorData(e).message);
      }
      const definitionHash = inputHash(def);
      if (continuation !== undefined || carried !== undefined) {
        const from = input.continuedFromRunId;
        if (!from) return reject('it carries state from an earlier run but was not continued from one');
        const body: MissionContinuationBody = { fromRunId: from, definitionHash, carriedHash: inputHash(carried ?? null) };
        const hand = deps.proofs.check('mission-continue', workflowId, body, continuation);
        if (!hand.ok) return reject(`continuation: ${hand.reason}`);
        if (!(await deps.claims.move('mission', workflowId, { workflowId, runId: from }, runId)))
          return reject(`run ${from} it continues does not hold the mission`);
        return go;
      }
      const claim = await deps.claims.claim<MissionAuthority>({
        kind: 'mission',
        subject: workflowId,
        workflowId,
        runId,
        data: { definitionHash },
      });
      if (claim.status === 'taken')
        return reject(`this definition was already used by run ${claim.by.runId} (a replayed mission runs nothing)`);
      if (claim.data.definitionHash !== definitionHash) return reject('another definition holds this mission id');
      await audit({
        type: 'MissionStarted',
        turnId: workflowId,
        missionId: workflowId,
        goalHash: textHash(def.goal),
        stepCount: def.steps.length,
        trustTier: tier,
        channelName: def.channel.name,
        capabilities: def.capabilities,
      });
      return go;
    },

    /**
     * The budget an approver raised at a budget gate: only when that gate of this verified mission was
     * opened for exactly this raise and its decision (checked by verifyGateDecision) approved it.
     * Audits `MissionBudgetRaised`.
     */
    async raiseMissionBudget(input: { definition: MissionDefinition; gateId: string; raise: BudgetRaise }): Promise<SpendBudget> {
      const def = input.definition;
      await heldMission(def);
      const gate = await deps.claims.read<GateAuthority>('gate', input.gateId);
      const decision = await deps.claims.read<DecisionAuthority>('gate-decision', input.gateId);
      const approved =
        gate?.workflowId === def.missionId &&
        gate.data.tool === BUDGET_TOOL_ID &&
        gate.data.inputHash === inputHash(input.raise) &&
        decision?.workflowId === def.missionId &&
        decision.data.kind === 'approve';
      if (!approved)
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${def.missionId}: gate ${input.gateId} did not approve raising the budget to that`),
        );
      const { budget, raiseTo } = input.raise;
      await audit({
        type: 'MissionBudgetRaised',
        turnId: def.missionId,
        missionId: def.missionId,
        gateId: input.gateId,
        ...(budget.tokens !== undefined ? { fromTokens: budget.tokens } : {}),
        ...(raiseTo.tokens !== undefined ? { toTokens: raiseTo.tokens } : {}),
        ...(budget.costUsd !== undefined ? { fromCostUsd: budget.costUsd } : {}),
        ...(raiseTo.costUsd !== undefined ? { toCostUsd: raiseTo.costUsd } : {}),
      });
      return raiseTo;
    },

    /** The proof that this verified run hands over to the run it continues as (continue-as-new). */
    async attestContinuation(input: { definition: MissionDefinition; carried: unknown }) {
      const { workflowId, runId } = currentExecution();
      const held = await heldMission(input.definition);
      const body: MissionContinuationBody = {
        fromRunId: runId,
        definitionHash: held.definitionHash,
        carriedHash: inputHash(input.carried ?? null),
      };
      return deps.proofs.seal('mission-continue', workflowId, body);
    },

    /**
     * One run of a recurring mission: checks the template's proof (bound to its schedule id), that
     * the Schedule itself started exactly this run, and claims the run once; then attests the run's
     * own mission (the template under the run's mission id, its own session).
     */
    async instantiateScheduledRun(input: ScheduledMissionArgs): Promise<{ ok: true; args: MissionArgs } | { ok: false; reason: string }> {
      const { workflowId, runId } = currentExecution();
      const scheduleId = input.template.missionId;
      const reject = async (reason: string) => {
        await audit({ type: 'MissionRejected', turnId: workflowId, missionId: scheduleId, reason });
        return { ok: false as const, reason };
      };
      const verdict = deps.proofs.check('mission-schedule', scheduleId, input.template, input.proof);
      if (!verdict.ok) return reject(`template: ${verdict.reason}`);
      if (!workflowId.startsWith(`${scheduleId}-`)) return reject(`workflow ${workflowId} is not a run of schedule ${scheduleId}`);
      if (!deps.schedules) return reject('this worker cannot check schedules');
      const why = await deps.schedules.refusal(scheduleId, workflowId, runId, input.proof.issuedAt);
      if (why) return reject(why);
      const claim = await deps.claims.claim({ kind: 'schedule-run', subject: workflowId, workflowId, runId, data: {} });
      if (claim.status === 'taken') return reject(`run ${workflowId} was already started by run ${claim.by.runId}`);
      const missionId = scheduledRunMissionId(scheduleId, workflowId);
      const definition: MissionDefinition = {
        ...input.template,
        missionId,
        channel: { ...input.template.channel, sessionId: missionId },
      };
      return {
        ok: true as const,
        args: {
          definition,
          proof: deps.proofs.seal('mission', missionId, definition),
          ...(input.dashboard ? { dashboard: true } : {}),
        },
      };
    },

    /**
     * Attests the turn request of one step, built here from the verified definition; a grant is
     * attested only when its gate in this mission was opened for exactly that call and approved.
     */
    async attestStepTurn(input: { definition: MissionDefinition; step: number; attempt: number; grant?: StepGrant }): Promise<TurnRequest> {
      const def = input.definition;
      await reachable(def, input.step);
      const step = def.steps[input.step];
      if (!step || !isTurnStep(step) || !Number.isInteger(input.attempt) || input.attempt < 1)
        throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no turn step ${input.step}`));
      const grant = input.grant ? await approvedGrant(def, input.grant) : undefined;
      const turnId = `${def.missionId}/step-${input.step}/run-${input.attempt}`;
      return deps.proofs.attest({
        turnId,
        message: { id: turnId, sessionId: def.channel.sessionId, content: textContent(step.text), receivedAt: Date.now() },
        channel: def.channel,
        capabilityLimit: def.capabilities,
        ...(grant ? { oneShotGrant: grant } : {}),
        ...(def.replyRoute ? { replyRoute: def.replyRoute } : {}),
      });
    },

    /** Opens a gate for exactly one pending call: claims it (tool, input hash, approvers) and audits `GateOpened`. */
    async openGate(input: {
      definition: MissionDefinition;
      gateId: string;
      step: number;
      tool: string;
      input: unknown;
    }): Promise<OpenedGate> {
      const def = input.definition;
      await reachable(def, input.step);
      const { workflowId, runId } = currentExecution();
      if (!input.gateId.startsWith(`${def.missionId}/gate-`))
        throw toApplicationFailure(new AivyxError('Internal', `gate id ${input.gateId} is not one of mission ${def.missionId}'s`));
      const hash = inputHash(input.input);
      const taintedBy = await gateTaint(def, input.step, input.tool, hash);
      // After untrusted content the owners decide (the asker too, if they are the owner at their machine), and they
      // alone: no second approvers either.
      const data: GateAuthority = {
        missionId: def.missionId,
        tool: input.tool,
        inputHash: hash,
        approvers: taintedBy.length > 0 ? gateApproversFor(gateAskerOf(def.channel), taintedBy, owners) : def.approvers,
        secondApprovers: taintedBy.length > 0 ? [] : (def.secondApprovers ?? []),
        ...(taintedBy.length > 0 ? { taintedBy } : {}),
      };
      const claim = await deps.claims.claim<GateAuthority>({ kind: 'gate', subject: input.gateId, workflowId, runId, data });
      // A continued run reopening a gate its predecessor opened finds it held by that run: same gate, same call.
      if (
        claim.status === 'taken' &&
        (claim.by.workflowId !== workflowId || claim.data.inputHash !== hash || claim.data.tool !== input.tool)
      ) {
        throw toApplicationFailure(new AivyxError('CapabilityDenied', `gate ${input.gateId} was already opened for another call`));
      }
      await audit({
        type: 'GateOpened',
        turnId: def.missionId,
        missionId: def.missionId,
        gateId: input.gateId,
        step: input.step,
        tool: input.tool,
        inputHash: hash,
        approvers: data.approvers.map((a) => `${a.identity}@${a.channel}`),
        ...(data.taintedBy ? { taintedBy: data.taintedBy } : {}),
      });
      return {
        inputHash: hash,
        approvers: data.approvers,
        secondApprovers: data.secondApprovers,
        ...(data.taintedBy ? { ownersOnly: true as const } : {}),
      };
    },

    /**
     * Checks a gate decision before the gate moves: its proof (made by the component that
     * authenticated the approver; bound to this mission, this gate, this decision; unexpired), that
     * the approver was asked and may approve, and that it is the gate's first decision. Audits
     * `GateApproved`/`GateDenied`, or `GateDecisionRejected` with the reason.
     */
    async verifyGateDecision(input: { kind: 'approve' | 'deny'; request: GateDecisionRequest }): Promise<Verdict> {
      const { workflowId, runId } = currentExecution();
      const req = input.request;
      const approver = req.approver ?? { identity: '?', channel: '?', trustTier: 'Untrusted' };
      const reject = async (reason: string): Promise<Verdict> => {
        await audit({
          type: 'GateDecisionRejected',
          turnId: workflowId,
          missionId: workflowId,
          gateId: String(req.gateId),
          decision: input.kind,
          claimedApprover: String(approver.identity),
          claimedChannel: String(approver.channel),
          reason,
        });
        return { ok: false, reason };
      };
      const verdict = deps.proofs.check('gate-decision', workflowId, gateDecisionBody(workflowId, input.kind, req), req.proof);
      if (!verdict.ok) return reject(verdict.reason);
      const gate = await deps.claims.read<GateAuthority>('gate', req.gateId);
      if (!gate || gate.workflowId !== workflowId) return reject(`mission ${workflowId} has no gate ${req.gateId}`);
      if (!APPROVING_TIERS.includes(approver.trustTier)) return reject(`a ${approver.trustTier} channel may not decide a gate`);
      if (![...gate.data.approvers, ...gate.data.secondApprovers].some((a) => same(a, approver)))
        return reject(`${approver.identity} on ${approver.channel} was not asked to decide gate ${req.gateId}`);
      // Checked against this worker's owners, whoever the gate's record lists: a taint gate is the owners' alone.
      const notOwner = taintGateRefusal(approver, gate.data.taintedBy ?? [], owners);
      if (notOwner) return reject(notOwner);
      const claim = await deps.claims.claim<DecisionAuthority>({
        kind: 'gate-decision',
        subject: req.gateId,
        workflowId,
        runId,
        data: { kind: input.kind, approver, nonce: req.nonce },
      });
      if (claim.data.nonce !== req.nonce)
        return reject(
          `gate ${req.gateId} was already decided (${claim.data.kind} by ${claim.data.approver.identity}@${claim.data.approver.channel}): a gate decides once`,
        );
      const event = {
        turnId: workflowId,
        missionId: workflowId,
        gateId: req.gateId,
        approver: approver.identity,
        approverChannel: approver.channel,
        approverTier: approver.trustTier,
        ...(req.reason ? { reasonHash: textHash(req.reason) } : {}),
      };
      await audit(input.kind === 'approve' ? { type: 'GateApproved', ...event } : { type: 'GateDenied', ...event });
      return { ok: true };
    },

    /**
     * Opens step `step`'s wait (a `waitFor` step of the verified definition): indexes it for the
     * channel adapters, until `until` (epoch ms, the workflow's clock). Returns the wait's key.
     */
    async openWait(input: { definition: MissionDefinition; step: number; until: number }): Promise<{ waitKey: string }> {
      const def = input.definition;
      await reachable(def, input.step);
      const step = def.steps[input.step];
      if (step?.kind !== 'waitFor')
        throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no waitFor step ${input.step}`));
      const { workflowId, runId } = currentExecution();
      const waitKey = missionWaitKey(def.missionId, input.step);
      // When it times out, by the server's clock: what settleWait checks a timeout against (the first opening's wins).
      await deps.claims.claim<WaitOpened>({ kind: 'mission-wait', subject: waitKey, workflowId, runId, data: { until: input.until } });
      if (step.event.source !== 'approval')
        await deps.waits?.open({
          waitKey,
          missionId: def.missionId,
          step: input.step,
          match: step.event,
          until: input.until,
          since: Context.current().info.currentAttemptScheduledTimestampMs,
        });
      return { waitKey };
    },

    /** Removes step `step`'s wait from the index (it ended: an event, a timeout or a cancel). */
    async closeWait(input: { definition: MissionDefinition; step: number }): Promise<void> {
      await heldMission(input.definition);
      await deps.waits?.close(missionWaitKey(input.definition.missionId, input.step));
    },

    /**
     * Decides how step `step`'s wait ended — from what the worker itself recorded, never from what the
     * workflow believes (an activity completion can be forged): `event` when a verified event claimed
     * the wait (or, for an approval, a verified approver approved its gate), `timeout` when a verified
     * approver denied it or the server's clock is past the wait's end. Recorded once; every later step
     * runs only on the branch recorded here (`reachable`).
     */
    async settleWait(input: { definition: MissionDefinition; step: number; gateId?: string }): Promise<WaitBranchTaken> {
      const def = input.definition;
      await heldMission(def);
      const { workflowId, runId } = currentExecution();
      const step = def.steps[input.step];
      if (step?.kind !== 'waitFor')
        throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no waitFor step ${input.step}`));
      const waitKey = missionWaitKey(def.missionId, input.step);
      const settled = await deps.claims.read<WaitOutcome>('wait-outcome', waitKey);
      if (settled?.workflowId === workflowId) return settled.data.branch;
      const opened = await deps.claims.read<WaitOpened>('mission-wait', waitKey);
      if (opened?.workflowId !== workflowId)
        throw toApplicationFailure(new AivyxError('CapabilityDenied', `mission ${workflowId}: wait ${waitKey} was never opened`));
      const now = Context.current().info.currentAttemptScheduledTimestampMs;
      let branch: WaitBranchTaken | undefined;
      if (step.event.source === 'approval') {
        const gateId = input.gateId ?? '';
        const gate = await deps.claims.read<GateAuthority>('gate', gateId);
        const decision = await deps.claims.read<DecisionAuthority>('gate-decision', gateId);
        const asked =
          gateId.startsWith(`${workflowId}/gate-`) &&
          gate?.workflowId === workflowId &&
          gate.data.tool === ASK_TOOL_ID &&
          gate.data.inputHash === inputHash({ question: step.event.question });
        if (asked && decision?.workflowId === workflowId) branch = decision.data.kind === 'approve' ? 'event' : 'timeout';
      } else {
        const event = await deps.claims.read('mission-event', waitKey);
        if (event?.workflowId === workflowId) branch = 'event';
      }
      if (branch === undefined && now >= opened.data.until) branch = 'timeout';
      if (branch === undefined)
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${workflowId}: wait ${waitKey} has neither a verified event nor reached its end`),
        );
      const claim = await deps.claims.claim<WaitOutcome>({ kind: 'wait-outcome', subject: waitKey, workflowId, runId, data: { branch } });
      return claim.data.branch;
    },

    /**
     * Checks an event sent to step `step`'s wait before the wait ends: its proof (made by the channel
     * adapter that authenticated the sender; bound to this mission, this wait, this event and its
     * facts), that the facts satisfy the step as the verified definition states it, and that it is
     * the wait's first event. Audits `MissionEventReceived`, or `MissionEventRejected` with the reason.
     */
    async verifyMissionEvent(input: { definition: MissionDefinition; step: number; request: MissionEventRequest }): Promise<Verdict> {
      const def = input.definition;
      await heldMission(def);
      const { workflowId, runId } = currentExecution();
      const req = input.request;
      const reject = async (reason: string): Promise<Verdict> => {
        await audit({ type: 'MissionEventRejected', turnId: workflowId, missionId: workflowId, waitKey: String(req.waitKey), reason });
        return { ok: false, reason };
      };
      const body: MissionEventProofBody = { waitKey: req.waitKey, eventId: req.eventId, facts: req.facts };
      const verdict = deps.proofs.check('mission-event', workflowId, body, req.proof);
      if (!verdict.ok) return reject(verdict.reason);
      const step = def.steps[input.step];
      if (req.waitKey !== missionWaitKey(workflowId, input.step) || step?.kind !== 'waitFor')
        return reject(`mission ${workflowId} is not waiting at ${req.waitKey}`);
      if (!eventMatches(step.event, req.facts)) return reject(`the event does not match what step ${input.step + 1} waits for`);
      const claim = await deps.claims.claim<{ eventId: string }>({
        kind: 'mission-event',
        subject: req.waitKey,
        workflowId,
        runId,
        data: { eventId: req.eventId },
      });
      if (claim.data.eventId !== req.eventId) return reject(`wait ${req.waitKey} already took another event: a wait ends once`);
      await audit({
        type: 'MissionEventReceived',
        turnId: workflowId,
        missionId: workflowId,
        waitKey: req.waitKey,
        source: req.facts.source,
        from: req.facts.from,
        eventId: req.eventId,
      });
      return { ok: true };
    },

    /**
     * Sends step `step`'s notice to the people it names (a notify step with `to`), each on their
     * channel — only where the verified definition's capabilities grant `channel.send:<channel>`,
     * as the `channel.send` tool would need. Once per recipient (the channel's outbox, keyed here).
     */
    async sendMissionNotice(input: { definition: MissionDefinition; step: number }): Promise<void> {
      const def = input.definition;
      await reachable(def, input.step);
      const step = def.steps[input.step];
      if (step?.kind !== 'notify' || !step.to)
        throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no notice to people at step ${input.step}`));
      const held = CapabilitySet.from(def.capabilities);
      const denied = step.to.find((r) => !held.grants(`channel.send:${r.channel}`));
      if (denied)
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${def.missionId} may not send on ${denied.channel}`, {
            hint: `a notice to ${denied.channel}:… needs channel.send:${denied.channel} in the mission's capabilities`,
          }),
        );
      if (!deps.sender) throw toApplicationFailure(new AivyxError('Channel', 'this worker cannot send notices to other people'));
      const key = activityKey();
      for (const [i, r] of step.to.entries()) {
        try {
          await deps.sender.send(r.channel, r.to, step.text, `${key}/${i}`);
        } catch (e) {
          throw toApplicationFailure(e);
        }
      }
    },

    /** Appends one mission or gate transition to the audit log, idempotently. */
    async recordMissionEvent(event: MissionAuditEvent): Promise<void> {
      if (Context.current().info.isLocal && !LOCAL_ENTRIES.has(event.type))
        throw toApplicationFailure(new AivyxError('Internal', `${event.type} is recorded by a remote activity, not a local one`));
      await audit(event);
    },
    /** Tells a gate's approvers (opened, reminder, escalation, withdrawal). */
    async notifyApprovers(notice: MissionNotice): Promise<void> {
      await deps.notifier.notify(notice, activityKey());
    },
  };
}

/** The activity object a worker registers for missions. */
export type MissionActivities = ReturnType<typeof createMissionActivities>;
