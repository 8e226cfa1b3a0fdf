/**
 * Confirm-first in a plain conversation: when a channel turn ends `Escalated`, the worker opens a
 * *confirmation mission* whose first gate is exactly the pending call (tool + input hash). The
 * worker decides who may decide it (core/gate-approvers.ts): after untrusted content the owners
 * only, else the sender, when their channel's tier may approve, and the owner (`local-user` on
 * `cli`). Once approved, the mission reruns the message with a one-shot grant
 * for that call and delivers the reply on the original channel's route. The model never decides:
 * gates move only by the mission's Update, validated against this approver list.
 */
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import type { ConfirmationGate, ConfirmationPort, EscalatedOutcome, MissionStartPort } from '../activities/ports.js';
import { createMissionSchedule, startMission } from '../channels/mission-gateway.js';
import { CapabilitySet } from '../core/capability/index.js';
import type { TurnRequest } from '../core/channel.js';
import { messageText } from '../core/message.js';
import type { MissionDefinition } from '../workflows/mission-messages.js';
import { confirmationGateId, confirmationMissionId } from '../workflows/turn-ids.js';
import type { Attestor } from '../infra/attestation.js';

/** What the confirmation starter needs. */
export interface ConfirmationDeps {
  client: Client;
  taskQueue: string;
  /** The worker vouches for a confirmation mission (it opens one only for a verified turn's genuine call). */
  attestor: Pick<Attestor, 'seal'>;
  /** The agent's capability set: the rerun is bounded by it (and the channel's tier ceiling). */
  capabilities: string[];
  /** Gate timers; defaults are the mission defaults (reminder 24 h, expiry 72 h). */
  reminderAfter?: string | number;
  expireAfter?: string | number;
  /** Upsert the dashboard search attributes (true on a server that has them). */
  dashboard?: boolean;
}

/** The definition of the confirmation mission for `req`'s escalated call. */
export function confirmationDefinition(
  req: TurnRequest,
  outcome: EscalatedOutcome,
  gate: ConfirmationGate,
  deps: Pick<ConfirmationDeps, 'capabilities' | 'reminderAfter' | 'expireAfter'>,
): MissionDefinition {
  const text = messageText(req.message.content);
  return {
    missionId: confirmationMissionId(req.turnId),
    goal: `confirm ${outcome.pendingTool} asked on ${req.channel.name}: ${text.slice(0, 120)}`,
    steps: [{ text }],
    approvers: gate.approvers,
    // Its rerun reads the same untrusted content: every gate it opens is the owners' too.
    ...(gate.taintedBy.length > 0 ? { taintedBy: gate.taintedBy } : {}),
    onExpire: 'fail',
    // A specialist's rerun holds no more than the specialist did (its lead's set ∩ its own).
    capabilities: req.capabilityLimit
      ? CapabilitySet.from(deps.capabilities).intersect(CapabilitySet.from(req.capabilityLimit)).toJSON()
      : deps.capabilities,
    channel: req.channel,
    pendingGate: { turnId: req.turnId, tool: outcome.pendingTool, input: outcome.pendingInput ?? null, reason: outcome.reason },
    ...(req.replyRoute ? { replyRoute: req.replyRoute } : {}),
    ...(deps.reminderAfter !== undefined ? { reminderAfter: deps.reminderAfter } : {}),
    ...(deps.expireAfter !== undefined ? { expireAfter: deps.expireAfter } : {}),
  };
}

/** Starts `def` once: a retried activity must not start a second run, even after the first one ended. */
async function startOnce(deps: ConfirmationDeps, def: MissionDefinition): Promise<void> {
  try {
    await startMission(deps, def, 'REJECT_DUPLICATE');
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** A confirmation port that starts confirmation missions over the Temporal client. */
export function createConfirmations(deps: ConfirmationDeps): ConfirmationPort {
  return {
    async open(req, outcome, gate) {
      await startOnce(deps, confirmationDefinition(req, outcome, gate, deps));
      return { gateId: confirmationGateId(req.turnId) };
    },
  };
}

/** The port `mission.create` starts its (approved, worker-built) missions and schedules through. */
export function createMissionStarts(deps: ConfirmationDeps): MissionStartPort {
  return {
    start: (def) => startOnce(deps, def),
    schedule: async (def, when) => {
      await createMissionSchedule(deps, def, when, `${def.channel.sender ?? '?'}@${def.channel.name}`);
    },
  };
}
