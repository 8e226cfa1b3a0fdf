/**
 * Every activity's timeouts and retry policy, in one table (the workflows proxy their activities
 * with these entries; activities/failure.ts marks the same kinds non-retryable when it converts an
 * error). Why each entry is what it is sits beside it.
 */
import type { ActivityOptions, LocalActivityOptions } from '@temporalio/common';
import type { AivyxErrorKind } from './errors.js';

/** Kinds where trying again cannot help: the same input fails the same way. */
export const NON_RETRYABLE_KINDS: readonly AivyxErrorKind[] = Object.freeze([
  'Config',
  'Crypto',
  'CapabilityDenied',
  'InvalidScope',
  'Audit',
  'NotFound',
  'Cancelled',
  'ToolEscalation',
]);

const nonRetryableErrorTypes = [...NON_RETRYABLE_KINDS];

export const ACTIVITY_POLICIES = {
  /** Turn bookkeeping (open, scope-denied entries, finalize): quick, idempotent by audit key, retried freely. */
  bookkeeping: {
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '200 ms', maximumInterval: '5 seconds', nonRetryableErrorTypes },
  },
  /** An LLM step heartbeats while it streams, so a dead worker is noticed in seconds, not minutes. */
  llm: {
    startToCloseTimeout: '10 minutes',
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 5, nonRetryableErrorTypes },
  },
  /**
   * A tool call. Tools decide their own retry story (natural / keyed / at-most-once) inside the
   * activity; a tool's own failure is an outcome, not a throw, so the activity fails only when the
   * worker or the database does — before the effect (the row comes first) or after it (the row says
   * what ran). The retries cover a database outage of most of a minute.
   */
  tool: {
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '10 seconds',
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '10 seconds',
      maximumAttempts: 8,
      nonRetryableErrorTypes,
    },
  },
  /** A call's audit entry waits for the database as long as the turn budget allows (the step races it). */
  recording: {
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '500 ms', backoffCoefficient: 2, maximumInterval: '10 seconds', nonRetryableErrorTypes },
  },
  /** A channel's reply: retried with backoff for a while (Telegram 429s, SMTP 4xx); the deliverer is idempotent. */
  delivery: {
    startToCloseTimeout: '2 minutes',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 12, nonRetryableErrorTypes },
  },
  /** The audit entry of a refused input: a few tries, then the workflow fails anyway (non-retryably). */
  refusal: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 5, nonRetryableErrorTypes } },
  /** Mission bookkeeping and verification; an Internal error here is a bug, not a blip. */
  mission: {
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '200 ms', maximumInterval: '10 seconds', nonRetryableErrorTypes: [...nonRetryableErrorTypes, 'Internal'] },
  },
} as const satisfies Record<string, ActivityOptions>;

/**
 * A local activity retries inside its workflow task, which the worker keeps alive by heartbeats: about
 * three history events every 8 s for as long as the database is down, so an outage of a day and a half
 * would reach Temporal's 51,200-event limit and the server would terminate the workflow. So a blip is
 * still retried inside the task (backoffs under 5 s: 6–8 s in all), and a longer outage moves onto
 * workflow timers (six events per retry: the failed attempt's marker, the timer's two, the workflow
 * task's three) with the backoff growing to a minute: about 360 events per hour of outage, about six
 * days before the limit. The price: once the database is back, a retry may wait up to a minute
 * (`test/faults/local-activity-outage.test.ts`).
 */
const LOCAL_RETRY_THRESHOLD = '5 seconds';
const LOCAL_MAXIMUM_INTERVAL = '1 minute';

function asLocal(p: ActivityOptions & { startToCloseTimeout: string; retry: NonNullable<ActivityOptions['retry']> }): LocalActivityOptions {
  return {
    startToCloseTimeout: p.startToCloseTimeout,
    localRetryThreshold: LOCAL_RETRY_THRESHOLD,
    retry: { ...p.retry, maximumInterval: LOCAL_MAXIMUM_INTERVAL },
  };
}

/** The policies of the activities that run as local activities (turn and mission bookkeeping). */
export const LOCAL_ACTIVITY_POLICIES = {
  bookkeeping: asLocal(ACTIVITY_POLICIES.bookkeeping),
  recording: asLocal(ACTIVITY_POLICIES.recording),
  mission: asLocal(ACTIVITY_POLICIES.mission),
} as const satisfies Record<string, LocalActivityOptions>;
