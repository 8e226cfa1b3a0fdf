/**
 * The turn's bookkeeping entries: inputs the workflow refused, denials it decided, and each call's
 * `ToolCall` entry, written exactly once from the call's row.
 */
import { Context } from '@temporalio/activity';
import type { ToolResultProofBody } from '../../core/authority.js';
import { AivyxError } from '../../core/errors.js';
import type { ToolCall } from '../../core/tools.js';
import { activityKey, bookkeepingKey, currentExecution } from '../execution.js';
import { errorData, toApplicationFailure } from '../failure.js';
import { INTERRUPTED_OUTCOME, UNVERIFIABLE_OUTCOME } from '../ports.js';
import { scheduledFacts, type TurnContext } from './context.js';
import type { RecordToolCallInput } from './types.js';

/** The activities that keep the turn's record. */
export function bookkeepingActivities(ctx: TurnContext) {
  const { deps } = ctx;
  return {
    /** Audits a workflow input the workflow refused (see `workflows/inputs.ts`); the input itself is never logged. */
    async recordRefusal(input: { what: string; reason: string }): Promise<void> {
      const info = Context.current().info;
      await deps.audit.append(activityKey(), {
        type: 'InputRefused',
        turnId: currentExecution().workflowId,
        workflowType: info.workflowType ?? '?',
        what: input.what,
        reason: input.reason,
      });
    },

    /**
     * Audits a result the worker refused (a completion forged at the frontend) before the workflow asks
     * the step again; keyed by what it records (a local activity), so a retried task writes it once.
     */
    async recordRefusedResult(input: { activity: string; step: number; attempt: number; reason: string }): Promise<void> {
      await deps.audit.append(bookkeepingKey(`refused-${input.activity}-${input.step}-${input.attempt}`), {
        type: 'ResultRefused',
        turnId: currentExecution().workflowId,
        activity: input.activity,
        step: input.step,
        attempt: input.attempt,
        reason: input.reason.slice(0, 500),
      });
    },

    /** Audits a denial the workflow decided (the deterministic half of the scope check). */
    async recordScopeDenied(input: {
      turnId: string;
      /** The call's step and place in it (runs since local bookkeeping send them: they key the entry). */
      step?: number;
      index?: number;
      call: Pick<ToolCall, 'callId' | 'tool'>;
      scope: string;
      held: string[];
    }): Promise<void> {
      // Remote (older runs, which send no step): the activity id, as those runs recorded it.
      const key = input.step === undefined ? activityKey() : bookkeepingKey(`tool-${input.step}-${input.index ?? 0}`);
      await ctx.denied(input.turnId, input.call, input.scope, input.held, key);
    },

    /** Writes a call's `ToolCall` entry from its row, exactly once; retried until the database answers. */
    async recordToolCall(input: RecordToolCallInput): Promise<{ outcome: string }> {
      const { workflowId, runId } = currentExecution();
      // A receipt vouches for runTool's facts and outcome; without a valid one the row (if runTool got that far) is the only truth.
      const trusted =
        'facts' in input &&
        deps.proofs.check(
          'tool-result',
          workflowId,
          { facts: input.facts, outcome: input.outcome } satisfies ToolResultProofBody,
          input.receipt,
        ).ok;
      const f = 'facts' in input ? input.facts : scheduledFacts(input.scheduled);
      if (f.turnId !== workflowId || !f.idemKey.startsWith(`${workflowId}/${runId}/`)) {
        throw toApplicationFailure(new AivyxError('CapabilityDenied', `recordToolCall: call ${f.idemKey} is not one of this run's calls`));
      }
      const ending = trusted
        ? { known: input.outcome, running: input.outcome, missing: input.outcome }
        : // The activity failed without a result (or with one that is not ours): the row, if any, is the truth.
          { running: INTERRUPTED_OUTCOME, missing: 'facts' in input ? UNVERIFIABLE_OUTCOME : `NotRun(${input.outcome})` };
      try {
        return { outcome: (await deps.toolCalls.audit(f, ending))?.outcome ?? INTERRUPTED_OUTCOME };
      } catch (e) {
        throw toApplicationFailure(
          e instanceof AivyxError
            ? e
            : new AivyxError('Storage', `recording tool call ${f.idemKey} failed: ${errorData(e).message}`, {
                hint: 'retried until the database answers',
              }),
        );
      }
    },
  };
}
