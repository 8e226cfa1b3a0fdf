/**
 * Where the running activity stands: the workflow execution it belongs to, and the idempotency
 * keys derived from it. Every activity that writes audit keys its entry with these (never the
 * attempt), so a retried activity never appends twice.
 */
import { Context } from '@temporalio/activity';
import { AivyxError } from '../core/errors.js';

/** The workflow execution the running activity belongs to. */
export function currentExecution(): { workflowId: string; runId: string } {
  const wf = Context.current().info.workflowExecution;
  if (!wf) throw new AivyxError('Internal', 'audited activities run only inside a workflow');
  return { workflowId: wf.workflowId, runId: wf.runId };
}

/** Stable idempotency key of the running activity: workflow id + run id + activity id. */
export function activityKey(): string {
  const { workflowId, runId } = currentExecution();
  return `${workflowId}/${runId}/${Context.current().info.activityId}`;
}

/**
 * The key of a bookkeeping entry. A remote activity's id is fixed once the workflow task that
 * scheduled it completes, so its activity id keys it (as always). A local activity runs before its
 * workflow task completes: should that task fail, its retry may take new events first (a cancel, an
 * update) and give the same sequence number to another command while the entry is already written.
 * So a local activity keys its entry by what it records, which no retry changes.
 */
export function bookkeepingKey(what: string): string {
  if (!Context.current().info.isLocal) return activityKey();
  const { workflowId, runId } = currentExecution();
  return `${workflowId}/${runId}/${what}`;
}

/** Keeps an activity's heartbeat going while `work` runs, so a dead worker is noticed quickly. */
export async function withHeartbeat<T>(work: () => Promise<T>, details: () => unknown = () => undefined): Promise<T> {
  const ctx = Context.current();
  // Repeats the work's last reported details: Temporal keeps only the latest heartbeat, so a bare beat would erase them.
  const timer = setInterval(() => ctx.heartbeat(details()), 1000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
