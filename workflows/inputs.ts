/**
 * Parsing what arrives at a workflow: anything that does not fit its schema fails the workflow
 * (or rejects the Update) with a clear, non-retryable `ApplicationFailure`. A throw of anything
 * else in workflow code would only fail the workflow task, which Temporal retries forever.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import type { z } from 'zod';
import type { TurnRequest } from '../core/channel.js';
import { refusedPayloadReason } from '../core/refused-payload.js';
import { describeIssues, gateDecisionRequestSchema, missionArgsSchema, turnRequestSchema } from '../core/schemas.js';
import type { GateDecisionRequest, MissionArgs } from './mission-messages.js';

/** The non-retryable failure of an input that cannot be used. */
export function inputFailure(what: string, problem: string, kind: 'Config' | 'Crypto' = 'Config'): ApplicationFailure {
  return ApplicationFailure.create({ type: kind, nonRetryable: true, message: `${what} refused: ${problem}` });
}

/** `value` parsed by `schema`, or a non-retryable failure naming the fields that are wrong. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const refused = refusedPayloadReason(value);
  if (refused !== undefined) throw inputFailure(what, refused, 'Crypto');
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw inputFailure(what, `malformed (${describeIssues(parsed.error)})`);
  return parsed.data;
}

/** A turn workflow's request (the tier is checked later, by name, in `openTurn`). */
export function parseTurnRequest(value: unknown): TurnRequest {
  return parseInput(turnRequestSchema, value, 'turn request') as TurnRequest;
}

/** A mission workflow's arguments. */
export function parseMissionArgs(value: unknown): MissionArgs {
  return parseInput(missionArgsSchema, value, 'mission definition') as MissionArgs;
}

/** A gate decision Update's argument (thrown as a plain error: an Update validator rejects with it). */
export function parseGateDecision(value: unknown): GateDecisionRequest {
  const refused = refusedPayloadReason(value);
  if (refused !== undefined) throw new Error(`decision refused: ${refused}`);
  const parsed = gateDecisionRequestSchema.safeParse(value);
  if (!parsed.success) throw new Error(`decision refused: malformed (${describeIssues(parsed.error)})`);
  return parsed.data as GateDecisionRequest;
}
