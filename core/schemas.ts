/**
 * Schemas of what crosses the Temporal boundary (workflow inputs, Update arguments). Workflow code
 * parses its inputs with them first: anyone at the frontend can send anything, and a malformed
 * input must fail cleanly (non-retryably) instead of throwing deep inside a workflow task that
 * Temporal would retry forever. Authority is not decided here — proofs are checked by activities.
 */
import { spendBudgetSchema, spendSchema } from './spend.js';
import { z } from 'zod';
import { AUTHORITY_PURPOSES } from './authority.js';

const id = z.lazy(() => z.string().min(1).max(1024));

/** A proof as it travels (its MAC is checked by an activity, not here). */
export const authorityProofSchema = z.lazy(() =>
  z.strictObject({
    v: z.literal(1),
    keyId: z.string().min(1).max(64),
    purpose: z.enum(AUTHORITY_PURPOSES),
    boundTo: id,
    issuedAt: z.number().int().nonnegative(),
    expiresAt: z.number().int().nonnegative().optional(),
    mac: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

const contentPartSchema = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('text'), text: z.string() }),
    z.strictObject({
      type: z.literal('image'),
      mime: z.string().min(1).max(200),
      data: z.string(),
      filename: z.string().max(1024).optional(),
    }),
    z.strictObject({
      type: z.literal('document'),
      mime: z.string().min(1).max(200),
      data: z.string(),
      filename: z.string().max(1024).optional(),
    }),
  ]),
);

/** An inbound message. */
export const messageSchema = z.lazy(() =>
  z.strictObject({
    id,
    sessionId: id,
    content: z.array(contentPartSchema),
    receivedAt: z.number().finite(),
  }),
);

/** Channel facts (the tier is checked by `channelTrustTier`, which names a bad value). */
export const channelFactsSchema = z.lazy(() =>
  z.strictObject({
    name: z.string().min(1).max(64),
    platform: z.enum(['Local', 'Rest', 'Telegram', 'Email', 'Discord', 'Slack', 'Matrix', 'Custom']),
    trustTier: z.string().min(1).max(32),
    sessionId: id,
    sender: z.string().max(1024),
  }),
);

/** A reply route: a channel's own address for a reply. */
export const replyRouteSchema = z.lazy(() => z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])));

/** A one-shot grant. */
export const oneShotGrantSchema = z.lazy(() =>
  z.strictObject({
    missionId: id,
    gateId: id,
    tool: z.string().min(1).max(200),
    inputHash: z.string().regex(/^[0-9a-f]{64}$/),
  }),
);

/** A turn request. */
export const turnRequestSchema = z.lazy(() =>
  z.strictObject({
    turnId: id,
    message: messageSchema,
    channel: channelFactsSchema,
    attestation: authorityProofSchema.optional(),
    oneShotGrant: oneShotGrantSchema.optional(),
    capabilityLimit: z.array(z.string().max(2048)).max(256).optional(),
    replyRoute: replyRouteSchema.optional(),
    resumeFrom: id.optional(),
    delegatedBy: z
      .strictObject({
        parentTurnId: id,
        specialist: z.string().min(1).max(64),
        taint: z.array(z.string().max(1024)).max(256).optional(),
      })
      .optional(),
    spendLimit: z
      .strictObject({ tokens: z.number().nonnegative().finite().optional(), costUsd: z.number().nonnegative().finite().optional() })
      .optional(),
  }),
);

/** The first few problems of a failed parse, as one line naming each field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(input)'}: ${i.message}`)
    .join('; ');
}

const approverRefSchema = z.lazy(() => z.strictObject({ identity: z.string().min(1).max(320), channel: z.string().min(1).max(64) }));
const durationSchema = z.lazy(() => z.union([z.string().min(1).max(32), z.number().nonnegative().finite()]));

/** An instant with its UTC offset: `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)` (a wait step's `until`). */
export const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2})$/;

const stepText = z.lazy(() => z.string().min(1).max(100_000));
/** One mission step (machines/mission-steps.ts): a turn, a wait (for a duration or until an instant), a notice. */
const missionStepSchema = z.lazy(() =>
  z.union([
    z.strictObject({ text: stepText }),
    z.strictObject({ kind: z.literal('turn'), text: stepText }),
    z.strictObject({ kind: z.literal('wait'), for: durationSchema }),
    z.strictObject({ kind: z.literal('wait'), until: z.string().regex(INSTANT), timeZone: z.string().min(1).max(64).optional() }),
    z.strictObject({
      kind: z.literal('notify'),
      text: z.string().min(1).max(4096),
      to: z
        .array(z.strictObject({ channel: z.string().min(1).max(64), to: z.string().min(1).max(320) }))
        .min(1)
        .max(20)
        .optional(),
    }),
    z.strictObject({
      kind: z.literal('waitFor'),
      event: z.discriminatedUnion('source', [
        z.strictObject({ source: z.literal('email'), from: z.string().min(3).max(320), thread: z.string().min(1).max(998).optional() }),
        z.strictObject({
          source: z.literal('telegram'),
          from: z.string().min(1).max(64).optional(),
          contains: z.string().min(1).max(200).optional(),
        }),
        z.strictObject({
          source: z.literal('matrix'),
          from: z.string().min(3).max(320).optional(),
          room: z.string().min(3).max(320).optional(),
          contains: z.string().min(1).max(200).optional(),
        }),
        z.strictObject({ source: z.literal('approval'), question: z.string().min(1).max(2000) }),
      ]),
      within: durationSchema,
      onEvent: z.enum(['continue', 'end']).optional(),
      onTimeout: z.enum(['continue', 'end']).optional(),
    }),
    z.strictObject({ kind: z.literal('plan') }),
  ]),
);

/** A mission definition (durations and instants are checked by `checkSteps`/`durationMs` when the mission starts). */
export const missionDefinitionSchema = z.lazy(() =>
  z.strictObject({
    missionId: id,
    goal: z.string().max(10_000),
    steps: z.array(missionStepSchema).max(1000),
    approvers: z.array(approverRefSchema).max(50),
    secondApprovers: z.array(approverRefSchema).max(50).optional(),
    reminderAfter: durationSchema.optional(),
    expireAfter: durationSchema.optional(),
    escalateAfter: durationSchema.optional(),
    onExpire: z.enum(['fail', 'skip-step']),
    capabilities: z.array(z.string().max(2048)).max(256),
    channel: channelFactsSchema,
    pendingGate: z
      .strictObject({ turnId: id, tool: z.string().min(1).max(200), input: z.unknown(), reason: z.string().max(10_000) })
      .optional(),
    replyRoute: replyRouteSchema.optional(),
    taintedBy: z.array(z.string().min(1).max(400)).min(1).max(50).optional(),
    plannedFrom: id.optional(),
    budget: spendBudgetSchema.optional(),
  }),
);

/** The arguments of `scheduledMissionWorkflow` (what a Temporal Schedule's action carries). */
export const scheduledMissionArgsSchema = z.lazy(() =>
  z.strictObject({
    template: missionDefinitionSchema,
    proof: authorityProofSchema,
    dashboard: z.boolean().optional(),
  }),
);

/** The arguments of `missionWorkflow`. */
export const missionArgsSchema = z.lazy(() =>
  z.strictObject({
    definition: missionDefinitionSchema,
    proof: authorityProofSchema,
    carried: z
      .strictObject({
        snapshot: z.unknown(),
        gateSeq: z.number().int().nonnegative(),
        stepsRun: z.number().int().nonnegative(),
        plan: z.unknown().optional(),
        budget: spendBudgetSchema.optional(),
        spent: spendSchema.optional(),
      })
      .optional(),
    continuation: authorityProofSchema.optional(),
    historyLimit: z.number().int().positive().optional(),
    dashboard: z.boolean().optional(),
  }),
);

/** A gate decision Update's argument. */
export const gateDecisionRequestSchema = z.lazy(() =>
  z.strictObject({
    gateId: id,
    approver: z.strictObject({
      identity: z.string().min(1).max(320),
      channel: z.string().min(1).max(64),
      trustTier: z.enum(['Untrusted', 'SemiTrusted', 'Trusted', 'Kernel']),
    }),
    reason: z.string().max(2000).optional(),
    nonce: z.string().min(16).max(128),
    proof: authorityProofSchema,
  }),
);

/** A mission event Update's argument: what a channel adapter authenticated, with its proof. */
export const missionEventRequestSchema = z.lazy(() =>
  z.strictObject({
    waitKey: id,
    eventId: id,
    facts: z.strictObject({
      source: z.enum(['email', 'telegram', 'matrix']),
      from: z.string().min(1).max(320),
      room: z.string().min(1).max(320).optional(),
      username: z.string().min(1).max(64).optional(),
      threadIds: z.array(z.string().min(1).max(998)).max(50).optional(),
      contains: z.string().min(1).max(200).optional(),
      tier: z.string().min(1).max(32).optional(),
    }),
    proof: authorityProofSchema,
  }),
);

/** A session workflow's state (fresh or carried through continue-as-new). */
export const sessionStateSchema = z.lazy(() =>
  z.strictObject({
    sessionId: id,
    seen: z.array(z.string().max(2048)).max(1000),
    turnsCompleted: z.number().int().nonnegative(),
    /** How long the session stays open without a message (default a day); 1 s to 30 days. */
    idleAfterMs: z
      .number()
      .int()
      .min(1000)
      .max(30 * 24 * 3600_000)
      .optional(),
    /** The deferred tools its turns loaded (core/tool-offer.ts); not authority. */
    loadedTools: z.array(z.string().max(64)).max(64).optional(),
  }),
);
