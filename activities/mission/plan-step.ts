/**
 * A plan step: the model drafts the plan of a mission that starts from its goal, a gate shows it to
 * the approvers, and only the plan they approved becomes the mission that runs.
 */
import { Context } from '@temporalio/activity';
import { inputHash } from '../../core/canonical-json.js';
import { AivyxError } from '../../core/errors.js';
import type { StepGrant } from '../../machines/index.js';
import type { MissionArgs, MissionDefinition } from '../../workflows/mission-messages.js';
import { toApplicationFailure } from '../failure.js';
import { checkPlan, draftPlan, PLAN_TOOL, plannedMission, type MissionPlan } from '../mission-plan.js';
import type { MissionContext } from './context.js';

/** The activities of a mission's plan step. */
export function planStepActivities({ deps, reachable, approvedGrant }: MissionContext) {
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
  };
}
