/** A child `turnWorkflow`'s outcome, whether it returned it or failed with it (a mission's step, a lead's specialist). */
import { ApplicationFailure, ChildWorkflowFailure } from '@temporalio/workflow';
import type { TurnOutcome } from '../core/outcomes.js';

/** Awaits a started child turn; a failed turn's outcome is read back from its failure's details. */
export async function childTurnOutcome(child: Promise<TurnOutcome>): Promise<TurnOutcome> {
  try {
    return await child;
  } catch (err) {
    if (err instanceof ChildWorkflowFailure && err.cause instanceof ApplicationFailure) {
      const detail = err.cause.details?.[0] as TurnOutcome | undefined;
      if (detail && typeof detail === 'object' && 'status' in detail) return detail;
      return { status: 'Failed', error: { kind: 'Internal', message: err.cause.message }, toolCallsMade: 0 };
    }
    throw err;
  }
}
