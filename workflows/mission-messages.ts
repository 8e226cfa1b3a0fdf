/** Messages of `missionWorkflow`, defined once and shared with clients (channels, tests). */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { AuthorityProof } from '../core/authority.js';
import type { ChannelFacts, ReplyRoute } from '../core/channel.js';
import type { Spend, SpendBudget } from '../core/spend.js';
import {
  stepLabel,
  type GateApprover,
  type GateApproverRef,
  type MissionEventFacts,
  type MissionStep,
  type OnExpire,
} from '../machines/index.js';

/** A mission as a person defines it (docs/MISSIONS.md). */
export interface MissionDefinition {
  missionId: string;
  goal: string;
  steps: MissionStep[];
  approvers: GateApproverRef[];
  /** Asked as well once `escalateAfter` passes without a decision. */
  secondApprovers?: GateApproverRef[];
  /** Durations like `'24h'` or milliseconds. Defaults: reminder 24 h, expiry 72 h, no escalation. */
  reminderAfter?: string | number;
  expireAfter?: string | number;
  escalateAfter?: string | number;
  onExpire: OnExpire;
  /** The mission's capability set: step turns run with agent ∩ channel tier ceiling ∩ this. */
  capabilities: string[];
  /** The channel the mission runs for: its step turns carry these facts. */
  channel: ChannelFacts;
  /**
   * A call that already asked for approval (a chat turn that ended Escalated under confirm-first):
   * the mission opens its first gate for exactly this call before running any step, and the first
   * step reruns that turn's message with the one-shot grant once approved.
   */
  pendingGate?: PendingGate;
  /** Where step turns deliver their replies (the original channel's route), if anywhere. */
  replyRoute?: ReplyRoute;
  /**
   * Set by the worker for a mission born of untrusted content (a confirmation of a tainted call, a
   * `mission.create` in a tainted turn): every gate it opens is decided by the owners only.
   */
  taintedBy?: string[];
  /** A planned mission: the mission that planned it, which alone may run it (as its child). */
  plannedFrom?: string;
  /** Its spend budget (docs/BUDGETS.md); absent: the worker's AIVYX_MISSION_*_BUDGET, or none. */
  budget?: SpendBudget;
}

/** The escalated call a confirmation mission starts at. */
export interface PendingGate {
  /** The turn that asked. */
  turnId: string;
  tool: string;
  input: unknown;
  reason: string;
}

/**
 * What a recurring mission's Schedule starts each time (`scheduledMissionWorkflow`): the template
 * (its `missionId` is the schedule id) and the gateway's proof over it (purpose `mission-schedule`).
 */
export interface ScheduledMissionArgs {
  template: MissionDefinition;
  proof: AuthorityProof;
  dashboard?: boolean;
}

/** State carried through continue-as-new. */
export interface MissionCarry {
  snapshot: unknown;
  gateSeq: number;
  stepsRun: number;
  /** A plan step's drafted plan, while its gate is open or its grant not yet used. */
  plan?: unknown;
  /** The spend budget as approvers last raised it, and what the mission's steps spent so far. */
  budget?: SpendBudget;
  spent?: Spend;
}

/** Arguments of `missionWorkflow`. */
export interface MissionArgs {
  definition: MissionDefinition;
  /**
   * The definition's proof (purpose `mission`, bound to the mission id), made by the component that
   * authenticated its creator: the REST gateway, or the worker for a confirmation mission.
   */
  proof: AuthorityProof;
  carried?: MissionCarry;
  /** Continue-as-new only: the previous (verified) run's proof that it hands over to this one. */
  continuation?: AuthorityProof;
  /** Continue-as-new once history passes this many events (default 4,000; Temporal's suggestion also counts). */
  historyLimit?: number;
  /** Upsert the AivyxMissionState/AivyxOpenGate/AivyxApprover search attributes (default false: the time-skipping server has none). */
  dashboard?: boolean;
}

/** How a mission ended. */
export interface MissionResult {
  missionId: string;
  state: 'completed' | 'failed' | 'cancelled' | 'expired';
  stepsRun: number;
  reason?: string;
  /** What its step turns spent (absent when nothing was reported). */
  spent?: Spend;
}

/**
 * An approver's decision on one gate, as the component that authenticated the approver (the REST
 * gateway, the Telegram or e-mail adapter) sends it: the proof (purpose `gate-decision`, bound to the
 * mission id, expiring) covers the gate, the decision, the approver's identity, channel and tier,
 * the reason's hash and a nonce. The worker checks it before the gate moves.
 */
export interface GateDecisionRequest {
  gateId: string;
  approver: GateApprover;
  reason?: string;
  nonce: string;
  proof: AuthorityProof;
}

/** What a decision update returns. */
export interface GateDecisionResult {
  gateId: string;
  state: string;
}

/** A mission's state for channels and operators. */
export interface MissionStatus {
  missionId: string;
  state: string;
  step: number;
  stepsRun: number;
  /** What a wait step is waiting for (a timer until when), while it waits. */
  waiting?: string;
  /** What its step turns spent so far, and its spend budget (docs/BUDGETS.md). */
  spent?: Spend;
  budget?: SpendBudget;
  gate?: { gateId: string; state: string; tool: string; inputHash: string; approvers: GateApproverRef[] } & Partial<GateCallView>;
}

/** What approvers (and `aivyx mission show`) are told about a gate's call besides tool and digest. */
export interface GateCallView {
  /** The pending call as `describeCall` renders it: canonical input, secrets redacted, long values cut. */
  call: string[];
  /** Why it needs approval (the escalation reason). */
  why: string;
  /** Who asked for it, on which channel. */
  askedBy: { identity: string; channel: string };
}

/**
 * An inbound event for one of the mission's waits, as the channel adapter that authenticated its
 * sender sends it: the proof (purpose `mission-event`, bound to the mission id) covers the wait, the
 * event id and the facts. The worker checks it, and that the facts satisfy the step, before the wait ends.
 */
export interface MissionEventRequest {
  /** `<missionId>/wait-<step>`: the wait the event is for. */
  waitKey: string;
  /** The event's own id (a hashed Message-ID, a Telegram message id): a wait takes its first event only. */
  eventId: string;
  facts: MissionEventFacts;
  proof: AuthorityProof;
}

/** The "tool" a `waitFor` approval's gate is about: a question to the mission's approvers (input `{ question }`). */
export const ASK_TOOL_ID = 'mission.ask';
/** The "tool" a budget gate is about: raising the mission's spend budget (input {@link BudgetRaise}). */
export const BUDGET_TOOL_ID = 'mission.budget';

/** What a budget gate asks: the mission spent `spent` of `budget`; raise it to `raiseTo`? */
export interface BudgetRaise {
  spent: Spend;
  budget: SpendBudget;
  raiseTo: SpendBudget;
}

/** The tool a plan gate is about: the model's proposed plan (activities/mission-plan.ts). */
export const PLAN_TOOL_ID = 'mission.plan';
/** The id of the mission an approved plan runs as (a child of the mission that planned it). */
export const plannedMissionId = (missionId: string): string => `${missionId}-planned`;

/** The key of step `step`'s wait in mission `missionId`. */
export const missionWaitKey = (missionId: string, step: number): string => `${missionId}/wait-${step}`;

/** Approve the open gate (validator: gate open, approver listed, tier may approve). */
export const approveGateUpdate = defineUpdate<GateDecisionResult, [GateDecisionRequest]>('approveGate');
/** Deny the open gate (same validator as approve). */
export const denyGateUpdate = defineUpdate<GateDecisionResult, [GateDecisionRequest]>('denyGate');
/** Deliver an inbound event to the open wait (validator: that wait is open; a refused event rejects the update). */
export const missionEventUpdate = defineUpdate<{ accepted: true }, [MissionEventRequest]>('missionEvent');
/** Cancel the mission: open gates are withdrawn and their approvers told. */
export const cancelMissionSignal = defineSignal<[{ reason?: string }]>('cancelMission');
/** The mission's current state. */
export const missionStatusQuery = defineQuery<MissionStatus>('missionStatus');

/** The UI summary and details (markdown) of a mission, set as `staticSummary`/`staticDetails` by whoever starts it. */
export function missionStartMetadata(def: MissionDefinition): { staticSummary: string; staticDetails: string } {
  const approvers = def.approvers.map((a) => `${a.identity}@${a.channel}`).join(', ');
  return {
    staticSummary: `Mission: ${def.goal}`.slice(0, 200),
    staticDetails: [
      `**Goal:** ${def.goal}`,
      '',
      '**Steps:**',
      ...def.steps.map((s, i) => `${i + 1}. ${stepLabel(s)}`),
      '',
      `**Approvers:** ${approvers || '(none)'}`,
      `**On expiry:** ${def.onExpire}`,
    ].join('\n'),
  };
}
