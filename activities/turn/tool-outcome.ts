/** A tool call's outcome as the record keeps it: its one-line summary, and back. */
import { isAivyxErrorKind, type AivyxErrorKind } from '../../core/errors.js';
import type { ToolOutcome } from '../../core/outcomes.js';

/** A tool outcome rebuilt from its recorded summary (a retried call whose first attempt finished). */
export function outcomeFromSummary(summary: string): ToolOutcome {
  const m = /^([A-Za-z]+)(?:\((.*)\))?$/s.exec(summary);
  const [, status, arg = ''] = m ?? [];
  const note = 'this result was recorded by an earlier attempt of the call; its output is not kept';
  if (status === 'Completed')
    return { status: 'Completed', output: { note }, verified: arg === 'Verified' || arg === 'Unverified' ? arg : 'NotApplicable' };
  if (status === 'Denied') return { status: 'Denied', scope: arg, held: [] };
  if (status === 'RequiresEscalation') return { status: 'RequiresEscalation', reason: 'a person must approve this exact call' };
  const kind: AivyxErrorKind = status === 'Failed' && isAivyxErrorKind(arg) ? arg : 'Tool';
  return { status: 'Failed', error: { kind, message: `${summary}: ${note}` } };
}
