/**
 * The end of a turn: the entries it still owes, the exchange kept in the session's history (with
 * the taint it leaves), `TurnEnded`, the confirmation gate of a channel turn that asked for
 * approval, and the outcome delivered to the channel.
 */
import { toolCallProofBody, turnRequestHash } from '../../core/authority.js';
import { inputHash } from '../../core/canonical-json.js';
import { AivyxError } from '../../core/errors.js';
import { gateApproversFor, gateAskerOf } from '../../core/gate-approvers.js';
import { messageText } from '../../core/message.js';
import { summarizeTurnOutcome, type TurnOutcome } from '../../core/outcomes.js';
import type { ToolCall } from '../../core/tools.js';
import { spendFields } from '../../core/spend.js';
import { flatLabel } from '../../core/taint.js';
import { confirmationRerunTurnId } from '../../workflows/turn-ids.js';
import { bookkeepingKey, currentExecution } from '../execution.js';
import { errorData, toApplicationFailure } from '../failure.js';
import { messageLabel } from '../taint-labels.js';
import { scheduledFacts, type TurnContext } from './context.js';
import type { FinalizedTurn, FinalizeTurnInput, TurnAuthority } from './types.js';
import type { ResumeRecord } from '../ports.js';

/** True for a turn a channel started (`turn/<channel>/…`), as opposed to a mission's step turn. */
export function isChannelTurn(turnId: string): boolean {
  return turnId.startsWith('turn/');
}

/** The activity that ends a turn. */
export function finalizeTurnActivities(ctx: TurnContext) {
  const { deps, places } = ctx;
  /** Keeps a completed exchange in the session's history; a turn that read untrusted content leaves it there, so the next turn starts tainted. */
  async function recordExchange(input: FinalizeTurnInput, authority: TurnAuthority): Promise<void> {
    const { request, outcome } = input;
    if (outcome.status !== 'Completed') return;
    const context = await deps.toolCalls.contextLabels(input.context ?? []);
    const sources = [
      ...new Set([
        ...(authority.taint ?? []),
        ...(input.taint ?? []),
        ...context.untrusted,
        ...(context.unrecorded.length > 0 ? ['a result this worker did not record'] : []),
      ]),
    ];
    // The workflow's own label of a specialist's answer names what it read; the worker's rows back it up.
    if (sources.length === 0) sources.push(...context.delegated);
    const untrusted = sources.length > 0 ? flatLabel(sources) : undefined;
    const fromMessage = messageLabel(authority.trustTier, request.channel.sender, request.channel.name, places.owners);
    await deps.history.record(input.sessionKey, {
      turnId: request.turnId,
      receivedAt: request.message.receivedAt,
      entries: [
        { role: 'user', text: messageText(request.message.content), ...(fromMessage ? { untrusted: fromMessage } : {}) },
        { role: 'assistant', text: input.plannerText ?? outcome.finalMessage, ...(untrusted ? { untrusted } : {}) },
      ],
    });
  }

  /** True when the escalated call is one this run's own model step proposed, in the turn this run verified. */
  function genuinePending(input: FinalizeTurnInput, authority: TurnAuthority): boolean {
    const { request, outcome, pending: p } = input;
    if (outcome.status !== 'Escalated' || !p || p.call.tool !== outcome.pendingTool) return false;
    return provedAt(request.turnId, p.step, p.call, p.proof) && turnRequestHash(request) === authority.requestHash;
  }

  /** True when `proof` shows this run's model step `step` proposed `call`. */
  function provedAt(turnId: string, step: number, call: ToolCall, proof: unknown): boolean {
    return deps.proofs.check('tool-call', turnId, toolCallProofBody(currentExecution().runId, step, call), proof).ok;
  }

  /**
   * Keeps what the run of the approved call continues from (any escalated turn: a channel's, whose
   * confirmation mission reruns it, or a mission's step turn, rerun by its mission). Written before
   * the gate opens, so an approval always finds it. Only for a genuine pending call, from the
   * workflow's own input (a local activity's input is the workflow's, never the frontend's).
   */
  async function keepResumeRecord(input: FinalizeTurnInput, authority: TurnAuthority | undefined): Promise<void> {
    const { request, pending, resume } = input;
    if (!deps.resumes || !authority || !pending || !resume || !genuinePending(input, authority)) return;
    await deps.resumes.save({
      turnId: request.turnId,
      runId: currentExecution().runId,
      step: pending.step,
      call: pending.call,
      alsoAsked: (pending.alsoAsked ?? []).filter((o) => provedAt(request.turnId, pending.step, o.call, o.proof)).map((o) => o.call),
      transcript: resume.transcript,
      context: input.context ?? [],
      taint: [...new Set([...(authority.taint ?? []), ...(input.taint ?? [])])],
      trusted: resume.trusted,
      ...specialistOf(authority),
    });
  }

  /** The specialist a verified turn ran as, from its claim (never the workflow's input), for its approved rerun. */
  function specialistOf(authority: TurnAuthority): Pick<ResumeRecord, 'specialist'> {
    const { specialist, leadTurnId, effective, spendLimit } = authority;
    if (!specialist || !leadTurnId) return {};
    return { specialist: { name: specialist, leadTurnId, effective, ...(spendLimit ? { spendLimit } : {}) } };
  }

  /**
   * A channel's turn that asked for approval gets its gate now, before the channel shows the outcome
   * (mission step turns are gated by their own mission: their ids do not start with `turn/`).
   * The worker opens it only for a verified turn and a call this run's model step really proposed.
   * Returns the outcome the channel is told (only the owners asked: it says so).
   */
  async function openConfirmation(input: FinalizeTurnInput, authority: TurnAuthority | undefined): Promise<TurnOutcome> {
    const { request, outcome } = input;
    if (outcome.status !== 'Escalated' || !deps.confirmations || !isChannelTurn(request.turnId) || !authority || !input.pending)
      return outcome;
    const p = input.pending;
    if (!genuinePending(input, authority)) return outcome;
    // Why the call was gated, from this worker's own records: after untrusted content only the owners decide.
    const taintedBy = [
      ...new Set([...(authority.taint ?? []), ...(await deps.toolCalls.callTaint([request.turnId], p.call.tool, inputHash(p.call.input)))]),
    ];
    const asker = gateAskerOf({ ...request.channel, trustTier: authority.trustTier });
    const approvers = gateApproversFor(asker, taintedBy, places.owners ?? []);
    const { gateId } = await deps.confirmations.open(request, outcome, { approvers, taintedBy });
    const rerun = confirmationRerunTurnId(request.turnId);
    // No gate id where the untrusted sender reads it: it would not work for them, and it invites the attempt.
    const text =
      taintedBy.length > 0
        ? `approval needed: the request went to the owner; once approved, the call runs as turn ${rerun}`
        : `approval needed: gate ${gateId} (aivyx mission approve ${gateId}); once approved, the call runs as turn ${rerun}`;
    deps.stream.publish(request.turnId, { type: 'status', text });
    return taintedBy.length > 0 ? { ...outcome, ownersOnly: true } : outcome;
  }

  return {
    /** Writes owed call entries and `TurnEnded`, records a completed exchange, opens a confirmation, delivers the outcome. */
    async finalizeTurn(input: FinalizeTurnInput): Promise<FinalizedTurn> {
      const { request, outcome } = input;
      // Calls the turn scheduled whose entry was not confirmed (the budget ran out first): a call that
      // never started is fenced off and recorded as not run; a finished one gets its entry now; one
      // still running writes its own entry when it finishes (or reconciliation does, if it never does).
      for (const c of input.owed ?? []) await deps.toolCalls.audit(scheduledFacts(c), { missing: 'NotRun(the turn ended first)' });
      const authority = await ctx.turnAuthority(request.turnId);
      if (authority) await recordExchange(input, authority);
      await deps.audit.append(bookkeepingKey('ended'), {
        type: 'TurnEnded',
        turnId: currentExecution().workflowId,
        outcome: summarizeTurnOutcome(outcome),
        toolCallsMade: outcome.toolCallsMade,
        durationMs: input.durationMs,
        ...(outcome.spend ? spendFields(outcome.spend) : {}),
      });
      await keepResumeRecord(input, authority);
      const told = await openConfirmation(input, authority);
      try {
        await deps.delivery.deliver(request, told);
      } catch (e) {
        throw toApplicationFailure(e instanceof AivyxError ? e : new AivyxError('Channel', `delivery failed: ${errorData(e).message}`));
      }
      return told.status === 'Escalated' && told.ownersOnly ? { ownersOnly: true } : {};
    },
  };
}
