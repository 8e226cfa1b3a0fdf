/**
 * `agent.delegate`, the worker's half: attests the child turn a lead's call asks for. The child may
 * hold the lead's effective set (from the lead's verified claim, never the call's input) ∩ the
 * specialist's configured set; the request is MACed for exactly the child's workflow id, which is
 * derived from this call. The workflow starts that child and returns its answer as the call's
 * result (workflows/turn-delegate.ts); the child's `openTurn` verifies all of it again.
 */
import { CapabilitySet } from '../../core/capability/index.js';
import type { TurnRequest } from '../../core/channel.js';
import { textContent } from '../../core/message.js';
import { delegateChildId, delegatedCapabilities, type Specialist } from '../../core/specialists.js';
import { agentDelegateTool } from '../../core/tools/agent-delegate.js';
import { toolErrorFor } from '../../core/tools/tool-error.js';
import type { ProofPort } from '../ports.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** What the workflow needs to run the child: the attested request, and whether it may run beside others. */
export interface DelegationOutput {
  delegation: { request: TurnRequest; parallel: boolean; specialist: string };
}

const fail = toolErrorFor('agent.delegate');

/** The `agent.delegate` implementation over the worker's proof port and the configured specialists. */
export function createAgentDelegateTool(deps: {
  proofs: Pick<ProofPort, 'attest'>;
  specialists: readonly Specialist[];
}): ToolImplementation {
  return implementTool(agentDelegateTool, {
    async run(input, ctx) {
      const specialist = deps.specialists.find((s) => s.name === input.specialist);
      if (!specialist)
        throw fail(`agent.delegate: no specialist named "${input.specialist}"`, {
          kind: 'NotFound',
          hint: `configured: ${deps.specialists.map((s) => s.name).join(', ') || 'none (AIVYX_SPECIALISTS)'}`,
        });
      if (!ctx.channel) throw fail('agent.delegate: the lead turn has no verified channel');
      // The call's activity id is the last part of its key: the child's id derives from it.
      const activityId = ctx.idemKey.slice(ctx.idemKey.lastIndexOf('/') + 1);
      const childId = delegateChildId(ctx.turnId, activityId, specialist.name);
      const limit = delegatedCapabilities(CapabilitySet.fromJSON(ctx.held), CapabilitySet.from(specialist.capabilities));
      const request: TurnRequest = {
        turnId: childId,
        // A session of its own: the child sees its task, not the lead's conversation.
        message: { id: childId, sessionId: childId, content: textContent(input.task), receivedAt: Date.now() },
        channel: { ...ctx.channel, sessionId: childId },
        capabilityLimit: limit.toJSON(),
        delegatedBy: {
          parentTurnId: ctx.turnId,
          specialist: specialist.name,
          ...(ctx.taint && ctx.taint.length > 0 ? { taint: [...ctx.taint] } : {}),
        },
        ...(specialist.budget ? { spendLimit: specialist.budget } : {}),
        // Where an approval it asks for, and the answer of its approved rerun, reach the owner: the lead's route.
        ...(ctx.replyRoute ? { replyRoute: ctx.replyRoute } : {}),
      };
      const output: DelegationOutput = {
        delegation: { request: deps.proofs.attest(request), parallel: specialist.parallel, specialist: specialist.name },
      };
      return { kind: 'completed', output, verified: 'NotApplicable' };
    },
  });
}
