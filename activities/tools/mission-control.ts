/**
 * `mission.list` and `mission.cancel`: the asking person's own missions (activities/owned-missions.ts
 * applies the rule). Who asks is the turn's verified channel facts, never the model's input: the
 * input names only a state filter or a mission id. Without a port (a worker that cannot reach
 * Temporal as a client) both refuse.
 */
import { askerOf } from '../../core/mission-owner.js';
import { AivyxError } from '../../core/errors.js';
import { flatLabel } from '../../core/taint.js';
import { missionCancelTool } from '../../core/tools/mission-cancel.js';
import { missionListTool } from '../../core/tools/mission-list.js';
import { toolError } from '../../core/tools/tool-error.js';
import { cancelOwnMission, listOwnMissions } from '../owned-missions.js';
import type { MissionControlPort } from '../ports.js';
import { implementTool, type ToolImplementation, type ToolRunContext } from './tool-implementation.js';

/** The turn's asker, or a refusal when the turn has no verified channel. */
function askerFor(tool: string, ctx: ToolRunContext) {
  if (!ctx.channel) throw toolError(tool, `${tool}: the turn has no verified sender`);
  return askerOf(ctx.channel);
}

/** A port-side AivyxError keeps its kind (NotFound, CapabilityDenied) under the tool's name. */
function asToolError(tool: string, err: unknown): unknown {
  if (!(err instanceof AivyxError) || err.kind === 'Tool') return err;
  return toolError(tool, `${tool}: ${err.message}`, {
    kind: err.kind,
    ...(err.hint ? { hint: err.hint } : {}),
    ...(err.detail ? { detail: err.detail } : {}),
    cause: err,
  });
}

/** Creates the `mission.list` and `mission.cancel` implementations over a mission control port. */
export function createMissionControlTools(deps: { control?: MissionControlPort }): ToolImplementation[] {
  const port = (tool: string): MissionControlPort => {
    if (!deps.control) throw toolError(tool, `${tool}: this worker cannot see missions`, { hint: 'run it under aivyx up' });
    return deps.control;
  };
  return [
    implementTool(missionListTool, {
      async run(input, ctx) {
        const listed = await listOwnMissions(port('mission.list'), askerFor('mission.list', ctx), input).catch((e: unknown) => {
          throw asToolError('mission.list', e);
        });
        // A mission drafted after untrusted content: its goal may be that content's words, not the owner's.
        const untrusted = flatLabel(listed.flatMap((m) => m.taintedBy ?? []));
        const missions = listed.map(({ taintedBy: _taintedBy, ...m }) => m);
        return { kind: 'completed', output: { missions }, verified: 'Verified', ...(untrusted ? { untrusted } : {}) };
      },
    }),
    implementTool(missionCancelTool, {
      async run(input, ctx) {
        const outcome = await cancelOwnMission(
          port('mission.cancel'),
          askerFor('mission.cancel', ctx),
          input.missionId,
          input.reason,
        ).catch((e: unknown) => {
          throw asToolError('mission.cancel', e);
        });
        return { kind: 'completed', output: outcome, verified: 'Verified' };
      },
    }),
  ];
}
