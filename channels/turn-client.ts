/**
 * How a channel adapter turns a message into a turn: attest it, check its size, submit it to
 * its session with update-with-start, then await the turn's outcome by id.
 */
import { WithStartWorkflowOperation, WorkflowFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ChannelFacts, ReplyRoute, TurnRequest } from '../core/channel.js';
import { assertMessageFits } from '../core/limits.js';
import type { Message } from '../core/message.js';
import type { TurnOutcome } from '../core/outcomes.js';
import type { Attestor } from '../infra/attestation.js';
import { submitTurnUpdate, type SubmitTurnResult } from '../workflows/messages.js';
import { sessionWorkflowId, turnWorkflowId } from '../workflows/turn-ids.js';

/** What a channel needs to start turns. */
export interface TurnClientDeps {
  client: Client;
  taskQueue: string;
  attestor: Attestor;
  /** How long a session stays open without a message (`AIVYX_SESSION_IDLE_MS`); default: the workflow's day. */
  sessionIdleMs?: number;
}

/** How a session this message starts behaves (a session already open keeps its own). */
export interface SessionOptions {
  /** Close after this long without a message instead of the install's AIVYX_SESSION_IDLE_MS (≥ 1 s). */
  idleMs?: number;
}

/** A one-shot message's session (`aivyx chat -m`) closes this soon after its turn ends: the least the session workflow takes. */
export const ONE_SHOT_IDLE_MS = 1000;

/** Builds the turn request for a message received on a channel (ids derived from the message id). */
export function buildTurnRequest(channel: ChannelFacts, message: Message, replyRoute?: ReplyRoute): TurnRequest {
  return { turnId: turnWorkflowId(channel.name, message.id), message, channel, ...(replyRoute ? { replyRoute } : {}) };
}

/**
 * Submits a turn to its session. Refuses an oversized message before any workflow starts;
 * a redelivered message (same id) returns `duplicate: true` and runs nothing.
 */
export async function submitTurn(deps: TurnClientDeps, request: TurnRequest, session: SessionOptions = {}): Promise<SubmitTurnResult> {
  assertMessageFits(request.message);
  const attested = deps.attestor.attest(request);
  const sessionId = request.channel.sessionId;
  const idle = session.idleMs ?? deps.sessionIdleMs;
  const start = new WithStartWorkflowOperation('sessionWorkflow', {
    workflowId: sessionWorkflowId(request.channel.name, sessionId),
    taskQueue: deps.taskQueue,
    args: [{ sessionId, seen: [], turnsCompleted: 0, ...(idle === undefined ? {} : { idleAfterMs: idle }) }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: `Session ${sessionId} on ${request.channel.name}`,
  });
  return deps.client.workflow.executeUpdateWithStart(submitTurnUpdate, { args: [attested], startWorkflowOperation: start });
}

/** Waits for a turn and returns its outcome; a turn that failed carries its outcome in the failure. */
export async function awaitTurnOutcome(client: Client, turnWorkflowId: string): Promise<TurnOutcome> {
  try {
    return (await client.workflow.getHandle(turnWorkflowId).result()) as TurnOutcome;
  } catch (err) {
    if (err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure) {
      const outcome = err.cause.details?.[0] as TurnOutcome | undefined;
      if (outcome && outcome.status === 'Failed') return outcome;
      return { status: 'Failed', error: { kind: 'Internal', message: err.cause.message }, toolCallsMade: 0 };
    }
    throw err;
  }
}

/** Asks a running turn to stop: the in-flight tool finishes, the turn ends `Cancelled`. */
export async function cancelTurn(client: Client, turnWorkflowId: string): Promise<void> {
  await client.workflow.getHandle(turnWorkflowId).cancel();
}
