/**
 * Reading what the Temporal client threw: "the frontend cannot be reached" and "no such workflow"
 * are different answers for a person (503 and 404), not one opaque `ServiceError`.
 */
import { isGrpcServiceError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';

// gRPC status codes (grpc-js `status`): the frontend is gone or did not answer in time.
const UNAVAILABLE = 14;
const DEADLINE_EXCEEDED = 4;
const NOT_FOUND = 5;

function* causes(err: unknown): Generator<unknown> {
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause;
  }
}

/** True when the client could not reach the Temporal frontend (connection refused, no answer). */
export function isTemporalUnreachable(err: unknown): boolean {
  for (const e of causes(err)) {
    if (isGrpcServiceError(e) && (e.code === UNAVAILABLE || e.code === DEADLINE_EXCEEDED)) return true;
  }
  return false;
}

/** True when Temporal says the workflow (mission, turn) does not exist. */
export function isWorkflowNotFound(err: unknown): boolean {
  for (const e of causes(err)) {
    if (e instanceof WorkflowNotFoundError) return true;
    if (isGrpcServiceError(e) && e.code === NOT_FOUND) return true;
  }
  return false;
}
