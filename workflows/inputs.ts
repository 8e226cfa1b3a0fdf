/**
 * Parsing what arrives at a workflow: anything that does not fit its schema fails the workflow
 * (or rejects the Update) with a clear, non-retryable `ApplicationFailure`. A throw of anything
 * else in workflow code would only fail the workflow task, which Temporal retries forever.
 */
import { ACTIVITY_POLICIES } from '../core/activity-policies.js';
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { z } from 'zod';
import type { TurnActivities } from '../activities/turn-activities.js';
import type { TurnRequest } from '../core/channel.js';
import { refusedPayloadReason } from '../core/refused-payload.js';
import {
  describeIssues,
  gateDecisionRequestSchema,
  missionArgsSchema,
  missionEventRequestSchema,
  scheduledMissionArgsSchema,
  turnRequestSchema,
} from '../core/schemas.js';
import type { GateDecisionRequest, MissionArgs, MissionEventRequest, ScheduledMissionArgs } from './mission-messages.js';

/** The non-retryable failure of an input that cannot be used. */
export function inputFailure(what: string, problem: string, kind: 'Config' | 'Crypto' = 'Config'): ApplicationFailure {
  return ApplicationFailure.create({ type: kind, nonRetryable: true, message: `${what} refused: ${problem}` });
}

// Refusals are audited; a database that is down must not keep a refused workflow alive for long.
const refusals = proxyActivities<Pick<TurnActivities, 'recordRefusal'>>(ACTIVITY_POLICIES.refusal);

/**
 * A workflow's input parsed by `schema`. Anything else — a payload the codec refused (not
 * encrypted, or copied from another workflow), or a malformed input — is audited (`InputRefused`)
 * and fails the workflow non-retryably, naming the fields that are wrong.
 */
export async function admitInput<T>(schema: z.ZodType<T>, value: unknown, what: string): Promise<T> {
  const refused = refusedPayloadReason(value);
  const parsed = refused === undefined ? schema.safeParse(value) : undefined;
  if (parsed?.success) return parsed.data;
  const reason = refused ?? `malformed (${parsed ? describeIssues(parsed.error) : 'no input'})`;
  await refusals.recordRefusal({ what, reason }).catch(() => undefined);
  throw inputFailure(what, reason, refused !== undefined ? 'Crypto' : 'Config');
}

/** A turn workflow's request (the tier is checked later, by name, in `openTurn`). */
export async function admitTurnRequest(value: unknown): Promise<TurnRequest> {
  return (await admitInput(turnRequestSchema, value, 'turn request')) as TurnRequest;
}

/** A mission workflow's arguments. */
export async function admitMissionArgs(value: unknown): Promise<MissionArgs> {
  return (await admitInput(missionArgsSchema, value, 'mission definition')) as MissionArgs;
}

/** The arguments of `scheduledMissionWorkflow`, admitted like a mission definition. */
export async function admitScheduledMissionArgs(value: unknown): Promise<ScheduledMissionArgs> {
  return (await admitInput(scheduledMissionArgsSchema, value, 'scheduled mission')) as ScheduledMissionArgs;
}

/** An Update's argument parsed by `schema` (thrown as a plain error: an Update validator rejects with it). */
function parseUpdateArg<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const refused = refusedPayloadReason(value);
  if (refused !== undefined) throw new Error(`${what} refused: ${refused}`);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`${what} refused: malformed (${describeIssues(parsed.error)})`);
  return parsed.data;
}

/** A gate decision Update's argument. */
export const parseGateDecision = (value: unknown): GateDecisionRequest =>
  parseUpdateArg(gateDecisionRequestSchema, value, 'decision') as GateDecisionRequest;

/** A mission event Update's argument. */
export const parseMissionEvent = (value: unknown): MissionEventRequest =>
  parseUpdateArg(missionEventRequestSchema, value, 'event') as MissionEventRequest;
