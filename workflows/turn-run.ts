/**
 * What one run of `turnWorkflow` holds while it runs: one object its loop and its calls share, so
 * each step and each call is a function of it (turn-workflow.ts, turn-calls.ts). Types only: a
 * turn's state lives in its own run, never in a module (workflows/sandbox-shared.ts).
 */
import type { PendingCall, ScheduledCall, TurnActivities } from '../activities/turn-activities.js';
import type { CapabilitySet } from '../core/capability/index.js';
import type { TurnRequest } from '../core/channel.js';
import type { TranscriptItem } from '../core/llm.js';
import type { Spend } from '../core/spend.js';
import type { TaintPolicy, TurnTaint } from '../core/taint.js';

/** The turn's bookkeeping: idempotent by key (local activities, or remote in runs from before). */
export type Bookkeeping = Pick<TurnActivities, 'openTurn' | 'recordScopeDenied' | 'recordRefusedResult' | 'finalizeTurn' | 'renderValues'>;
/** Recording a call's audit entry from its row. */
export type Recording = Pick<TurnActivities, 'recordToolCall'>;

/** The approved call a rerun runs first, and the transcript it continues (activities/turn/resume.ts). */
export type OpenedResume = NonNullable<OpenedTurn['resume']>;

/** What `openTurn` gave a turn it lets run. */
export type OpenedTurn = Extract<Awaited<ReturnType<TurnActivities['openTurn']>>, { ok: true }>;

/** The state of one turn run. */
export interface TurnRun {
  readonly req: TurnRequest;
  readonly startedAt: number;
  /** This run's workflow id and run id: with the activity id, a call's idempotency key. */
  readonly workflowId: string;
  readonly runId: string;
  readonly sessionKey: string;
  readonly bookkeeping: Bookkeeping;
  readonly recording: Recording;
  /** The channel's cancel (a cancel of the root scope): checked between LLM steps. */
  cancelRequested: boolean;
  toolCallsMade: number;
  /** What the model steps, quarantined reads and specialists spent, summed from their results (so the checks replay the same). */
  spent: Spend;
  /** Scheduled calls whose audit entry is not yet confirmed written (finalizeTurn writes what is left). */
  readonly owed: Map<string, ScheduledCall>;
  /** The call an escalated turn stopped at. */
  pending: PendingCall | undefined;
  /** Untrusted content in context (core/taint.ts), once the turn is open. */
  taint: TurnTaint | undefined;
  /** Every call scheduled so far: runTool re-reads their labels, so a result it did not record cannot pass as clean. */
  readonly context: string[];
  /** The model's final text when the owner was shown it rendered (held values substituted): what the history keeps. */
  plannerText: string | undefined;
  /** The model's transcript (the loop's), and trusted reads' outputs: what a resume record keeps of an escalated turn. */
  readonly transcript: TranscriptItem[];
  readonly trusted: string[];
  /** The deferred tools the session loaded before this turn (attacker-writable: only granted ones are ever offered). */
  readonly carriedTools: readonly string[];
  /** Deferred tools loaded so far, sorted (core/tool-offer.ts); undefined in runs from before deferred tools (all offered in full). */
  loadedTools: string[] | undefined;
  /** The specialists this turn delegated to (workflows/turn-delegate.ts): running ones by child id, and how many finished. */
  readonly delegations: Delegations;
}

/** A lead's specialists: what each running one is doing, the finished ones, and whether one that may not run beside others holds the floor. */
export interface Delegations {
  readonly active: Map<string, string>;
  readonly finished: string[];
  exclusive: boolean;
}

/** What the tool-calling loop works with once the turn is open. */
export interface TurnLoop {
  readonly opened: OpenedTurn;
  readonly effective: CapabilitySet;
  readonly transcript: TranscriptItem[];
  readonly taintPolicy: TaintPolicy;
  /** What the model is offered: the tools this worker implements. */
  readonly toolIds: string[];
}
