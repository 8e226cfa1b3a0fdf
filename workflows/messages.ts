/**
 * Signals, updates and queries of the session and turn workflows, defined once beside the
 * workflows and shared with clients (channels, CLI, tests).
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { TurnRequest } from '../core/channel.js';

/** Result of submitting a message to a session: the id of the turn workflow that runs it. */
export interface SubmitTurnResult {
  turnWorkflowId: string;
  /** True when this message had already been submitted (a redelivery): no second turn runs. */
  duplicate: boolean;
}

/** Queue a turn on its session; resolves once the turn workflow has started. */
export const submitTurnUpdate = defineUpdate<SubmitTurnResult, [TurnRequest]>('submitTurn');

/** What a session is doing right now (for `aivyx` status and the Temporal UI). */
export interface SessionStatus {
  sessionId: string;
  running: string | null;
  queued: string[];
  turnsCompleted: number;
}

/** Returns the session's current status. */
export const sessionStatusQuery = defineQuery<SessionStatus>('sessionStatus');
