/**
 * Plan → approve → execute: a mission that starts from a goal alone asks the model for a plan once
 * (one step offering one tool, `mission.plan`, whose input is a mission as `mission.create` takes it),
 * checks it like any model-drafted mission (steps, waits, capabilities), and — once its plan gate
 * approved exactly that plan — builds the planned mission: the same owner, approvers, channel and gate
 * timers, the plan's steps, and exactly the plan's capabilities (never more than the mission holds).
 */
import { CapabilitySet } from '../core/capability/index.js';
import { AivyxError } from '../core/errors.js';
import type { ToolSpec } from '../core/llm.js';
import { textContent } from '../core/message.js';
import { defineStep } from '../core/mission-spec.js';
import { missionCreateTool, type MissionCreateInput } from '../core/tools/mission-create.js';
import { PLAN_TOOL_ID, plannedMissionId, type MissionDefinition } from '../workflows/mission-messages.js';
import type { LlmProvider } from './llm/llm-provider.js';

/** The tool the planning step offers: a mission as `mission.create` takes it, without a schedule. */
export const PLAN_TOOL: ToolSpec = (() => {
  const schema = structuredClone(missionCreateTool.inputSchema) as { properties?: Record<string, unknown> };
  delete schema.properties?.schedule;
  return {
    id: PLAN_TOOL_ID,
    description:
      'Propose the plan for the mission: its steps in order (tasks, waits, notices) and the capabilities its tasks need. ' +
      'The owner approves the whole plan before any of it runs.',
    inputSchema: schema as ToolSpec['inputSchema'],
  };
})();

/** A plan as the model drafts it (checked): `mission.create`'s input without a schedule. */
export type MissionPlan = Omit<MissionCreateInput, 'schedule'>;

/** The plan in `input`, checked like a `mission.create` call, and within what the mission holds; throws `InvalidScope`/`CapabilityDenied`. */
export function checkPlan(input: unknown, def: Pick<MissionDefinition, 'capabilities'>): MissionPlan {
  if (typeof input === 'object' && input !== null && 'schedule' in input)
    throw new AivyxError('InvalidScope', 'a plan has no schedule', { hint: 'plan the steps of one run' });
  const plan = missionCreateTool.parse(input);
  const held = CapabilitySet.from(def.capabilities);
  const beyond = plan.capabilities.find((c) => !held.grants(c));
  if (beyond !== undefined)
    throw new AivyxError('CapabilityDenied', `the plan asks for ${beyond}, which this mission does not hold`, {
      hint: `the mission holds ${def.capabilities.join(', ') || 'nothing'}`,
    });
  return { goal: plan.goal, steps: plan.steps, capabilities: plan.capabilities };
}

/** Asks the model for a plan of `def`'s goal (one step, one tool); the plan as the model gave it (unchecked). */
export async function draftPlan(llm: LlmProvider, def: MissionDefinition, signal: AbortSignal, heartbeat: () => void): Promise<unknown> {
  const turnId = `${def.missionId}/plan`;
  const prompt = [
    `Plan this mission: ${def.goal}`,
    `Call mission.plan once with its steps. The tasks may use at most: ${def.capabilities.join(', ') || 'nothing (waits and notices only)'}.`,
  ].join('\n');
  const result = await llm.step(
    {
      turnId,
      step: 0,
      history: [],
      message: { id: turnId, sessionId: def.channel.sessionId, content: textContent(prompt), receivedAt: 0 },
      transcript: [],
      tools: [PLAN_TOOL],
    },
    { text: () => undefined, heartbeat, signal },
  );
  const call = result.type === 'tool_calls' ? result.calls.find((c) => c.tool === PLAN_TOOL.id) : undefined;
  if (!call) throw new AivyxError('Llm', 'the model proposed no plan (it did not call mission.plan)');
  return call.input;
}

/** The mission an approved plan runs as: `def`'s owner, approvers and timers; the plan's steps and capabilities. */
export function plannedMission(def: MissionDefinition, plan: MissionPlan): MissionDefinition {
  const missionId = plannedMissionId(def.missionId);
  const { pendingGate: _pending, ...rest } = def;
  return {
    ...rest,
    missionId,
    goal: plan.goal,
    steps: plan.steps.map(defineStep),
    capabilities: plan.capabilities,
    channel: { ...def.channel, sessionId: missionId },
    plannedFrom: def.missionId,
  };
}
