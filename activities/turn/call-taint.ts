/**
 * The worker's half of a call's taint decision (core/taint.ts): the workflow decides, and the
 * worker re-checks that decision against what it recorded itself before anything runs; and the
 * one-shot grant that lets exactly one approved call past a gate.
 */
import { inputHash } from '../../core/canonical-json.js';
import type { OneShotGrant } from '../../core/channel.js';
import { policyAction, stricter, taintGoverns, type CallTaint } from '../../core/taint.js';
import { findTool } from '../../core/tool-catalog.js';
import type { ToolCall } from '../../core/tools.js';
import { currentExecution } from '../execution.js';
import type { TurnContext } from './context.js';
import type { RunToolInput, TurnAuthority } from './types.js';

/** A call's taint as the worker holds it: the untrusted sources before it, and what they make of it. */
export interface WorkerTaint {
  sources: string[];
  action: CallTaint['action'];
  /** The authority field that keeps the call from being the owner's (named in the approval request). */
  field?: string;
  /** What that field holds once a value was substituted: the approver must see what will run, not a reference. */
  shows?: string;
}

/** The taint re-check and the grant check `runTool` makes, over the turn's shared context. */
export function callTaintCheck({ deps }: TurnContext) {
  const policy = deps.agent.taintPolicy ?? {};
  return {
    /**
     * The worker's re-check of the workflow's taint decision: every result in the turn's context must be
     * one this worker recorded, every untrusted source it knows of must be one the workflow counted,
     * and an effect's action is at least as strict as this worker's own policy.
     */
    async callTaint(authority: TurnAuthority, input: RunToolInput): Promise<{ refused: string } | WorkerTaint> {
      const context = await deps.toolCalls.contextLabels(input.context ?? []);
      if (context.unrecorded.length > 0)
        return { refused: `${context.unrecorded.length} result(s) in this turn's context were not produced by this worker` };
      const declared = input.taint?.sources ?? [];
      const unaccounted = [...(authority.taint ?? []), ...context.untrusted].filter((s) => !declared.includes(s));
      if (unaccounted.length > 0)
        return { refused: `the turn read untrusted content the workflow did not account for (${unaccounted.join('; ')})` };
      // A specialist's answer is labelled by the workflow; the worker holds it to its own rows.
      if (declared.length === 0 && context.delegated.length > 0)
        return {
          refused: `a specialist of this turn read untrusted content the workflow did not account for (${context.delegated.join('; ')})`,
        };
      if (declared.length === 0) return { sources: [], action: 'free' };
      const def = findTool(input.call.tool);
      const declaredAction = input.taint?.action ?? 'gate';
      // A governed call is free when the owner named every authority field (core/taint.ts): only the
      // workflow holds that text (the attested message, results this worker receipted), so its `free`
      // stands; anything else is at least as strict as this worker's own policy.
      const own = !def ? 'gate' : !taintGoverns(def) || declaredAction === 'free' ? 'free' : policyAction(def.id, policy);
      const field = input.taint?.field;
      return { sources: declared, action: stricter(declaredAction, own), ...(field ? { field } : {}) };
    },

    /** True when the turn's grant covers exactly this call and is used here first (a grant works once). */
    async grantCovers(grant: OneShotGrant | undefined, call: ToolCall, key: string): Promise<boolean> {
      if (!grant || grant.tool !== call.tool || grant.inputHash !== inputHash(call.input)) return false;
      const { workflowId, runId } = currentExecution();
      const use = await deps.claims.claim({ kind: 'grant-use', subject: grant.gateId, workflowId, runId, data: { call: key } });
      return use.status === 'claimed' || (use.status === 'held' && use.data.call === key);
    },
  };
}
