/**
 * What the worker attests for a verified mission: the turn request of each step it runs, and the
 * hand-over to the run it continues as. Both are built from the verified definition, never from
 * what the workflow hands in.
 */
import { continuationBody, type AuthorityProof } from '../../core/authority.js';
import type { OneShotGrant, TurnRequest } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import { textContent } from '../../core/message.js';
import { isTurnStep, type StepGrant } from '../../machines/index.js';
import type { MissionDefinition } from '../../workflows/mission-messages.js';
import { currentExecution } from '../execution.js';
import { grantedCall, resumingMission } from '../turn/resume.js';
import { toApplicationFailure } from '../failure.js';
import type { MissionContext } from './context.js';

/** The activities that attest a mission's step turns and hand-overs. */
export function attestActivities({ deps, heldMission, reachable, approvedGrant }: MissionContext) {
  /**
   * The turn whose approved call a step's rerun continues: the run before it (a confirmation
   * mission's second run continues the channel's turn that asked), when that turn left a record
   * for exactly the granted call. Derived here from the verified definition, never named by the workflow.
   */
  async function resumable(def: MissionDefinition, step: number, attempt: number, grant: OneShotGrant): Promise<string | undefined> {
    const asked =
      step === 0 && attempt === 2 && def.pendingGate ? def.pendingGate.turnId : `${def.missionId}/step-${step}/run-${attempt - 1}`;
    const record = await deps.resumes?.load(asked);
    return record && resumingMission(record.turnId, def.missionId) && grantedCall(record, grant) ? asked : undefined;
  }

  return {
    /** The proof that this verified run hands over to the run it continues as (continue-as-new). */
    async attestContinuation(input: { definition: MissionDefinition; carried: unknown }): Promise<AuthorityProof> {
      const { workflowId, runId } = currentExecution();
      const held = await heldMission(input.definition);
      return deps.proofs.seal('mission-continue', workflowId, continuationBody(runId, held.definitionHash, input.carried));
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
      const resumeFrom = grant ? await resumable(def, input.step, input.attempt, grant) : undefined;
      const turnId = `${def.missionId}/step-${input.step}/run-${input.attempt}`;
      return deps.proofs.attest({
        turnId,
        message: { id: turnId, sessionId: def.channel.sessionId, content: textContent(step.text), receivedAt: Date.now() },
        channel: def.channel,
        capabilityLimit: def.capabilities,
        ...(grant ? { oneShotGrant: grant } : {}),
        ...(def.replyRoute ? { replyRoute: def.replyRoute } : {}),
        ...(resumeFrom ? { resumeFrom } : {}),
      });
    },
  };
}
