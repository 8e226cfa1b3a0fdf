/** The mission activities' dependencies, the claims they keep, and the verdicts they return. */
import type { SpendBudget } from '../../core/spend.js';
import type { GateApproverRef } from '../../machines/index.js';
import type { LlmProvider } from '../llm/llm-provider.js';
import type { AuditPort, ClaimPort, MissionWaitsPort, ProofPort, ResumeRecordPort, ToolCallLogPort } from '../ports.js';
import type { ChannelSender } from '../tools/channel-send.js';
import type { MissionNotifier } from './notice.js';

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
  /** Escalated turns' resume records: an approved step's rerun continues from the turn that asked; none: it reruns afresh. */
  resumes?: Pick<ResumeRecordPort, 'load'>;
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
export interface WaitOpened {
  until: number;
}
/** What a wait's outcome claim holds. */
export interface WaitOutcome {
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
