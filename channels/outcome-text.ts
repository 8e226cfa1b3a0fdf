/**
 * What a chat channel (Telegram, email) says when a turn ends: the answer, or a short sentence
 * for the other outcomes. An escalated turn names the gate its confirmation mission opened
 * (app/confirmations.ts), so the person knows what the approval request refers to — unless only
 * the owners may decide it (it follows untrusted content): then the room learns only that it waits.
 */
import type { TurnOutcome } from '../core/outcomes.js';
import { confirmationGateId } from '../workflows/turn-ids.js';

/** The reply for `outcome` of turn `turnId`; `approveHint` adds the channel's own way to approve. */
export function outcomeReplyText(outcome: TurnOutcome, turnId: string, approveHint: (gateId: string) => string = () => ''): string {
  switch (outcome.status) {
    case 'Completed':
      return outcome.finalMessage;
    case 'Escalated': {
      // The owners decide a call that follows untrusted content, privately: no gate id where its source reads.
      if (outcome.ownersOnly)
        return `This needs the owner's approval first: ${outcome.reason} (tool ${outcome.pendingTool}). The request went to the owner privately; nothing runs unless they approve it.`;
      const gateId = confirmationGateId(turnId);
      return `This needs approval first: ${outcome.reason} (tool ${outcome.pendingTool}). An approval request for gate ${gateId} went to the people who may decide it.${approveHint(gateId)}`;
    }
    case 'TimedOut':
      if (outcome.budget) return `Sorry, I stopped: ${outcome.budget.reason}. The owner can raise the budget (docs/BUDGETS.md).`;
      return `Sorry, that took too long (${Math.round(outcome.elapsedMs / 1000)} s) and was stopped.`;
    case 'Cancelled':
      return 'Cancelled.';
    case 'Failed':
      return `Sorry, that failed (${outcome.error.kind}): ${outcome.error.message}`;
  }
}

/**
 * A tool call's recorded summary (`Completed(Unverified)`, `Denied(fs.read:/x)`, `Failed(Timeout)`:
 * core/outcomes.ts, as the audit log keeps it) in the owner's words.
 */
export function toolSummaryText(summary: string): string {
  const m = /^([A-Za-z]+)(?:\((.*)\))?$/s.exec(summary);
  const [status, arg] = [m?.[1], m?.[2]];
  switch (status) {
    case 'Completed':
      return arg === 'Verified' ? 'done (checked afterwards)' : arg === 'Unverified' ? 'done (its effect was not checked)' : 'done';
    case 'Denied':
      return `refused: it needs ${arg ?? 'a scope'} (not granted)`;
    case 'RequiresEscalation':
      return 'needs approval first';
    case 'Failed':
      return `failed${arg ? ` (${arg})` : ''}`;
    default:
      return summary;
  }
}

/** True when a tool call's summary says it did not do its work (failed or refused). */
export function toolSummaryFailed(summary: string): boolean {
  return /^(Failed|Denied)\b/.test(summary);
}
