/**
 * Every `patched()` id of our workflows, in one place. A patch keeps runs recorded before a change of
 * command order replaying on the path they took; the id is written into the history of every run
 * that passes it, so an id never changes. Retiring one: once no open run (and no committed history
 * in test/histories/) predates it, switch its call to `deprecatePatch(id)` for a release, then drop
 * the old branch and the constant.
 */

/**
 * 2026-12-04, turns: openTurn, recordScopeDenied, recordToolCall and finalizeTurn run as local
 * activities (no server round trip; no pending activity anyone at the frontend could complete).
 * Turns started before replay their remote activities.
 */
export const LOCAL_BOOKKEEPING = 'local-bookkeeping';

/**
 * 2026-12-04, turns: a reply whose delivery gave up is kept in the owner's inbox (holdUndelivered).
 * Turns that gave up before the inbox existed replay without scheduling the hold.
 */
export const HOLD_UNDELIVERED_REPLIES = 'hold-undelivered-replies';

/**
 * 2026-12-04, missions: a step that may spend waits at a budget gate while the spend budget is used
 * up. Missions started before spend budgets replay without the check (and so without that gate).
 */
export const MISSION_SPEND_BUDGET = 'mission-spend-budget';

/**
 * 2026-12-04, missions: a gate's outcome notice goes out beside the mission's next step instead of
 * before it (one round trip off every decision). Missions started before replay awaiting the notice.
 */
export const GATE_OUTCOME_TOLD_ALONGSIDE = 'gate-outcome-told-alongside';

/**
 * 2026-12-04, missions: the bookkeeping on a mission's way to its gate (openMission, attestStepTurn,
 * openGate, recordMissionEvent) runs as local activities keyed by what they record. Missions started
 * before replay them remote.
 */
export const MISSION_BOOKKEEPING_LOCAL = 'mission-bookkeeping-local';

/**
 * 2026-12-05, turns: a model step whose result the worker's codec refused (a completion forged at the
 * frontend: junk, or another workflow's encrypted result) is audited and asked again, up to
 * MAX_REFUSED_RESULTS times, instead of failing the turn. Turns that failed on one before replay failing.
 */
export const RETRY_REFUSED_RESULTS = 'retry-refused-results';

/**
 * A final answer that references held values (core/values.ts) is rendered for the owner by a local
 * activity before the turn ends: a new command, so runs from before it replay without one.
 */
export const RENDER_VALUES = 'render-values';

/**
 * 2026-12-05, turns: a rerun that openTurn gives an approved call to resume (an attested `resumeFrom`)
 * runs that call first and continues the escalated turn's transcript, instead of planning afresh.
 * Runs recorded before replay the fresh plan they made.
 */
export const RESUME_APPROVED_CALLS = 'resume-approved-calls';

/**
 * 2026-12-05, turns and sessions: a turn offers a core set of tools in full and the rest of what it
 * is granted by name, in the description of `tools.load` (core/tool-offer.ts); the loaded set is
 * sent with each model step, returned with the outcome and passed by the session to its next turn.
 * Runs from before offer every granted tool in full and start their turns with the request alone.
 */
export const DEFERRED_TOOLS = 'deferred-tools';
