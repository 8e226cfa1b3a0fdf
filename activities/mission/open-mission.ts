/**
 * Opening a mission (DESIGN.md D5): `openMission` checks the definition's proof and claims it for
 * this run, or takes the claim over from the verified run this one continues; a recurring
 * mission's run is first checked against its Schedule and attested as a mission of its own.
 */
import { continuationBody } from '../../core/authority.js';
import { channelTrustTier, type TrustTier } from '../../core/capability/index.js';
import { inputHash, textHash } from '../../core/canonical-json.js';
import type { MissionArgs, MissionDefinition, ScheduledMissionArgs } from '../../workflows/mission-messages.js';
import { currentExecution } from '../execution.js';
import { errorData } from '../failure.js';
import type { MissionContext } from './context.js';
import type { MissionAuthority, OpenMissionVerdict, Verdict } from './types.js';

/** The mission id of one scheduled run: the schedule id and the run's scheduled time, as id characters. */
export function scheduledRunMissionId(scheduleId: string, workflowId: string): string {
  return `${scheduleId}-run-${workflowId.slice(scheduleId.length + 1).replace(/[^0-9A-Za-z]/g, '')}`;
}

type OpenMissionInput = { args: MissionArgs; continuedFromRunId?: string; parentId?: string };

/** The activities that open a mission run. */
export function openMissionActivities({ deps, audit }: MissionContext) {
  /** The verified definition's channel tier, or why the definition may not open this workflow's run at all. */
  function checkDefinition(input: OpenMissionInput, workflowId: string): { tier: TrustTier } | { refused: string } {
    const { definition: def, proof } = input.args;
    if (def.missionId !== workflowId)
      return {
        refused: `the definition is for mission "${def.missionId}" but was started as workflow "${workflowId}" (a copied definition)`,
      };
    const verdict = deps.proofs.check('mission', workflowId, def, proof);
    if (!verdict.ok) return { refused: `definition: ${verdict.reason}` };
    // A planned mission runs only as the child of the mission that planned it (the server names the parent).
    if (def.plannedFrom !== undefined && input.parentId !== def.plannedFrom)
      return { refused: `a planned mission runs only as the child of ${def.plannedFrom}` };
    try {
      return { tier: channelTrustTier(def.channel.trustTier) };
    } catch (e) {
      return { refused: errorData(e).message };
    }
  }

  /** Why this run may not take the mission over from the verified run it continues; undefined when it has. */
  async function takeOverRefusal(input: OpenMissionInput, definitionHash: string): Promise<string | undefined> {
    const { workflowId, runId } = currentExecution();
    const from = input.continuedFromRunId;
    if (!from) return 'it carries state from an earlier run but was not continued from one';
    const body = continuationBody(from, definitionHash, input.args.carried);
    const hand = deps.proofs.check('mission-continue', workflowId, body, input.args.continuation);
    if (!hand.ok) return `continuation: ${hand.reason}`;
    if (!(await deps.claims.move('mission', workflowId, { workflowId, runId: from }, runId)))
      return `run ${from} it continues does not hold the mission`;
    return undefined;
  }

  /** Why this run may not claim the mission afresh (a replayed definition, another one under this id); undefined when it has. */
  async function claimRefusal(definitionHash: string): Promise<string | undefined> {
    const { workflowId, runId } = currentExecution();
    const claim = await deps.claims.claim<MissionAuthority>({
      kind: 'mission',
      subject: workflowId,
      workflowId,
      runId,
      data: { definitionHash },
    });
    if (claim.status === 'taken') return `this definition was already used by run ${claim.by.runId} (a replayed mission runs nothing)`;
    if (claim.data.definitionHash !== definitionHash) return 'another definition holds this mission id';
    return undefined;
  }

  return {
    /**
     * Checks the definition's proof and its binding to this workflow, then claims it for this run
     * (a fresh start) or takes the claim over from the verified run this one continues; audits
     * `MissionStarted` or `MissionRejected`.
     */
    async openMission(input: OpenMissionInput): Promise<OpenMissionVerdict> {
      const { workflowId } = currentExecution();
      const { definition: def, carried, continuation } = input.args;
      // The verified definition's own budget, else this worker's default (a continued run carries what approvers raised it to).
      const budget = def.budget ?? deps.missionBudget;
      const go: OpenMissionVerdict = budget ? { ok: true, budget } : { ok: true };
      const reject = async (reason: string): Promise<Verdict> => {
        await audit({ type: 'MissionRejected', turnId: workflowId, missionId: workflowId, reason });
        return { ok: false, reason };
      };
      const checked = checkDefinition(input, workflowId);
      if ('refused' in checked) return reject(checked.refused);
      const definitionHash = inputHash(def);
      if (continuation !== undefined || carried !== undefined) {
        const refused = await takeOverRefusal(input, definitionHash);
        return refused === undefined ? go : reject(refused);
      }
      const refused = await claimRefusal(definitionHash);
      if (refused !== undefined) return reject(refused);
      await audit({
        type: 'MissionStarted',
        turnId: workflowId,
        missionId: workflowId,
        goalHash: textHash(def.goal),
        stepCount: def.steps.length,
        trustTier: checked.tier,
        channelName: def.channel.name,
        capabilities: def.capabilities,
      });
      return go;
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
  };
}
