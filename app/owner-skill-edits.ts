/**
 * An owner's edit of a skill (a new version written on the CLI, REST or Telegram) goes through the
 * same gate as a model's proposal: a confirmation mission whose first gate is exactly the call
 * `skills.propose` with the new content, so the approver sees the whole procedure and who wrote it,
 * and only that content's hash is granted. No model writes it and no model decides it: the worker's
 * resume record holds the call itself, so the approved rerun runs exactly that call first (with the
 * one-shot grant `skills.propose` insists on) and stores it, then ends.
 */
import { createHash, randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { ResumeRecordPort } from '../activities/ports.js';
import type { StoredSkill } from '../activities/tools/skill-port.js';
import type { ChannelFacts } from '../core/channel.js';
import { ownerRefs } from '../core/gate-approvers.js';
import type { SkillContent } from '../core/tools/skill-fields.js';
import type { ToolCall } from '../core/tools.js';
import { skillProposeTool } from '../core/tools/skill-propose.js';
import { startMission } from '../channels/mission-gateway.js';
import type { Attestor } from '../infra/attestation.js';
import type { MissionDefinition } from '../workflows/mission-messages.js';
import { confirmationGateId, confirmationMissionId } from '../workflows/turn-ids.js';

/** Who wrote an edit, as their channel authenticated them. */
export interface EditAuthor {
  identity: string;
  channel: string;
}

/** The gate an edit waits at. */
export interface OpenedEdit {
  name: string;
  /** The version it becomes once approved. */
  version: number;
  missionId: string;
  gateId: string;
}

/** Opens the approval gate of an owner's edit. */
export interface SkillEditGates {
  /** `requestKey`: the platform's id of the asking message, so a redelivered one opens the same gate once. */
  open(content: SkillContent, current: StoredSkill, by: EditAuthor, requestKey?: string): Promise<OpenedEdit>;
}

/** What opening an edit's gate needs. */
export interface SkillEditDeps {
  client: Client;
  taskQueue: string;
  /** Vouches for the edit's mission, as the gateway vouches for a mission its owner creates. */
  attestor: Pick<Attestor, 'seal'>;
  /** The worker's resume records: the approved rerun runs the call they hold. */
  resumes: ResumeRecordPort;
  /** `AIVYX_OWNER_IDS`: with the owner at their machine, the people who may approve an edit. */
  owners: readonly string[];
  reminderAfter?: string | number;
  expireAfter?: string | number;
  dashboard?: boolean;
}

/**
 * The facts the rerun runs under: the owner's own surface, a local channel (Trusted, as the CLI and
 * REST are), so `skills.propose` — Trusted only — is in reach; the mission's capability set is that
 * one scope, so the rerun can do nothing else.
 */
const OWNER_SURFACE = (by: EditAuthor, editId: string): ChannelFacts => ({
  name: 'owner-skills',
  platform: 'Custom',
  trustTier: 'Trusted',
  // A conversation of its own per edit: one edit's rerun reads no other's history.
  sessionId: `skill-edit-${editId}`,
  sender: `${by.identity}@${by.channel}`,
});

/** The mission definition of an edit's gate: one step whose rerun stores exactly `call`. */
function editDefinition(editId: string, call: ToolCall, current: StoredSkill, by: EditAuthor, deps: SkillEditDeps): MissionDefinition {
  const turnId = editTurnId(editId);
  const next = current.version + 1;
  return {
    missionId: confirmationMissionId(turnId),
    goal: `store the owner's edit of skill ${current.name} (v${current.version} → v${next})`,
    steps: [{ text: `Store the new version of skill ${current.name} that ${by.identity} on ${by.channel} wrote.` }],
    approvers: ownerRefs(deps.owners),
    onExpire: 'fail',
    capabilities: ['skills.propose'],
    channel: OWNER_SURFACE(by, editId),
    pendingGate: {
      turnId,
      tool: call.tool,
      input: call.input,
      reason: `skills.propose "${current.name}": the owner ${by.identity} on ${by.channel} wrote version ${next} (replacing v${current.version}); a person must approve the whole skill before it is stored`,
    },
    ...(deps.reminderAfter !== undefined ? { reminderAfter: deps.reminderAfter } : {}),
    ...(deps.expireAfter !== undefined ? { expireAfter: deps.expireAfter } : {}),
  };
}

/** The "turn" an edit stands for: the id its resume record and confirmation mission derive from. */
const editTurnId = (editId: string): string => `owner-skill-edit/${editId}`;

/** Edits' gates over the Temporal client. */
export function createSkillEditGates(deps: SkillEditDeps): SkillEditGates {
  return {
    async open(content, current, by, requestKey) {
      // One id per asking message (or a fresh one): two edits of one skill are two gates, each approving its own text.
      const editId = requestKey ? createHash('sha256').update(`${by.channel}\0${requestKey}`).digest('hex').slice(0, 32) : randomUUID();
      const turnId = editTurnId(editId);
      const call: ToolCall = { callId: 'owner-edit', tool: skillProposeTool.id, input: content };
      // Written before the gate opens, as finalizeTurn writes a turn's: an approval always finds it. The
      // transcript holds the call, so the model the rerun reports to sees a call before its result.
      const transcript = [{ role: 'assistant' as const, calls: [call] }];
      await deps.resumes.save({ turnId, runId: 'owner-edit', step: 0, call, transcript, context: [], taint: [], trusted: [] });
      try {
        await startMission(deps, editDefinition(editId, call, current, by, deps), 'REJECT_DUPLICATE');
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
      return {
        name: current.name,
        version: current.version + 1,
        missionId: confirmationMissionId(turnId),
        gateId: confirmationGateId(turnId),
      };
    },
  };
}
