/**
 * `mission.create`: starts the mission a person approved (the tool is confirm-first, so it runs
 * only with the one-shot grant of a gate that showed the whole mission). The worker builds the
 * definition from the verified turn — its channel and sender become the mission's, its reply
 * route the notices' — and vouches for it. The mission may use no more than the asking turn held:
 * every capability it lists must be granted by the turn's set. The mission id derives from the
 * call's idempotency key, so a retried call starts one mission.
 */
import { createHash } from 'node:crypto';
import { CapabilitySet } from '../../core/capability/index.js';
import { defineStep } from '../../core/mission-spec.js';
import { missionCreateTool } from '../../core/tools/mission-create.js';
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { gateApproversFor, gateAskerOf } from '../../core/gate-approvers.js';
import type { MissionDefinition } from '../../workflows/mission-messages.js';
import type { MissionStartPort } from '../ports.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

const toolError = toolErrorFor('mission.create');

/**
 * Creates the `mission.create` implementation over a start port (none: this worker cannot start
 * missions); `owners` are `AIVYX_OWNER_IDS` (the local owner always approves missions it starts).
 */
export function createMissionCreateTool(deps: { starts?: MissionStartPort; owners?: readonly string[] }): ToolImplementation {
  return implementTool(missionCreateTool, {
    async run(input, ctx) {
      if (!deps.starts) throw toolError('mission.create: this worker cannot start missions', { hint: 'run it under aivyx up' });
      const channel = ctx.channel;
      if (!channel) throw toolError('mission.create: the turn has no verified channel to report to');
      const held = CapabilitySet.from([...ctx.held]);
      const beyond = input.capabilities.find((c) => !held.grants(c));
      if (beyond !== undefined)
        throw toolError(`mission.create: the mission asks for ${beyond}, which this conversation does not hold`, {
          kind: 'CapabilityDenied',
          hint: 'a mission can use no more than the conversation that started it',
          detail: { scope: beyond },
        });
      const missionId = `mission-${createHash('sha256').update(ctx.idemKey).digest('hex').slice(0, 32)}`;
      // A mission asked for after untrusted content is the owners' to decide, at every gate it opens.
      const taintedBy = [...(ctx.taint ?? [])];
      const def: MissionDefinition = {
        missionId,
        goal: input.goal,
        steps: input.steps.map(defineStep),
        approvers: gateApproversFor(gateAskerOf(channel), taintedBy, deps.owners ?? []),
        ...(taintedBy.length > 0 ? { taintedBy } : {}),
        onExpire: 'fail',
        capabilities: input.capabilities,
        // Its own session: the mission's turns do not write into the conversation that started it.
        channel: { ...channel, sessionId: missionId },
        ...(ctx.replyRoute ? { replyRoute: ctx.replyRoute } : {}),
      };
      if (input.schedule) {
        await deps.starts.schedule(def, input.schedule);
        return { kind: 'completed', output: { scheduleId: missionId, steps: def.steps.length }, verified: 'Verified' };
      }
      await deps.starts.start(def);
      return { kind: 'completed', output: { missionId, steps: def.steps.length }, verified: 'Verified' };
    },
  });
}
