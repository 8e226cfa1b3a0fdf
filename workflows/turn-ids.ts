/** Deterministic workflow ids: a redelivered message maps to the same turn, so it never runs twice. */
import { sha256Hex } from '../core/canonical-json.js';

function slug(s: string): string {
  // Workflow ids are free text, but keep them readable and free of separators we use.
  return s.replace(/[^A-Za-z0-9._@-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** Id of the turn workflow for a message received on a channel. */
export function turnWorkflowId(channelName: string, messageId: string): string {
  return `turn/${slug(channelName)}/${slug(messageId)}`;
}

/** Id of the session workflow that orders a session's turns. */
export function sessionWorkflowId(channelName: string, sessionId: string): string {
  return `session/${slug(channelName)}/${slug(sessionId)}`;
}

/** The confirmation mission of a turn (deterministic, so a retried activity finds the same one). */
export function confirmationMissionId(turnId: string): string {
  return `mission-confirm-${sha256Hex(turnId).slice(0, 32)}`;
}

/**
 * The turn that runs an approved call: the confirmation mission re-runs the message once (its step 0,
 * second run; the first run was the turn that asked). A client that asked follows this id for the result.
 */
export function confirmationRerunTurnId(turnId: string): string {
  return `${confirmationMissionId(turnId)}/step-0/run-2`;
}

/** The gate a confirmation mission opens first. */
export function confirmationGateId(turnId: string): string {
  return `${confirmationMissionId(turnId)}/gate-1`;
}
