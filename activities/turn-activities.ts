/**
 * The turn's activities, built by factory over narrow ports: one factory per concern in `turn/`,
 * over one shared context (`turn/context.ts`), composed here. Each one that writes audit keys its
 * entry by workflow id + run id + activity id (never the attempt), so a retried activity never
 * appends twice (`execution.ts`).
 *
 * Authority (DESIGN.md D5): `openTurn` is the only place a turn request's proof is checked; it
 * claims the request for this workflow run (a copy replayed by another run finds it taken) and
 * stores the effective capability set with the claim. `runTool` takes the set and the one-shot
 * grant from that claim — never from its own input — and runs only calls that carry the proof
 * `llmStep` made for this run and step, so a forged or copied activity result cannot run a tool.
 */
import { bookkeepingActivities } from './turn/bookkeeping.js';
import { createTurnContext } from './turn/context.js';
import { finalizeTurnActivities } from './turn/finalize-turn.js';
import { llmStepActivities } from './turn/llm-step.js';
import { openTurnActivities } from './turn/open-turn.js';
import { runToolActivities } from './turn/run-tool.js';
import type { TurnActivityDeps } from './turn/types.js';
import { valueActivities } from './turn/values.js';

export type * from './turn/types.js';

/** Builds the turn activities. */
export function createTurnActivities(deps: TurnActivityDeps) {
  const ctx = createTurnContext(deps);
  return {
    ...openTurnActivities(ctx),
    ...llmStepActivities(ctx),
    ...bookkeepingActivities(ctx),
    ...runToolActivities(ctx),
    ...finalizeTurnActivities(ctx),
    ...valueActivities(ctx),
  };
}

/** The activity object a worker registers. */
export type TurnActivities = ReturnType<typeof createTurnActivities>;
