/**
 * `gateMachine`: one approval gate for exactly one pending tool call. Pure and workflow-safe:
 * its timers (reminder, escalation, expiry) are events the hosting workflow sends when its
 * durable Temporal timers fire, so the machine itself never reads a clock.
 */
import { assign, setup } from 'xstate';
import type { TrustTier } from '../core/capability/index.js';

/** Someone allowed to decide a gate: an identity on a named channel. */
export interface GateApproverRef {
  identity: string;
  channel: string;
}

/** Who is deciding, as the channel adapter asserts it. */
export interface GateApprover extends GateApproverRef {
  trustTier: TrustTier;
}

/** Tiers whose channels may decide a gate. Untrusted never can; Kernel never comes from a channel. */
export const APPROVING_TIERS: readonly TrustTier[] = Object.freeze(['Trusted', 'SemiTrusted'] as const);

/** What a gate is about and who may decide it. */
export interface GateInput {
  gateId: string;
  tool: string;
  inputHash: string;
  approvers: readonly GateApproverRef[];
  secondApprovers?: readonly GateApproverRef[];
  /** The call follows untrusted content: its approvers are the owners (core/gate-approvers.ts). */
  ownersOnly?: boolean;
}

/** The gate's context. */
export interface GateContext extends GateInput {
  escalated: boolean;
  decidedBy?: GateApprover;
  reason?: string;
}

/** Events a gate accepts. */
export type GateEvent =
  | { type: 'REMIND' }
  | { type: 'ESCALATE' }
  | { type: 'APPROVE'; approver: GateApprover; reason?: string }
  | { type: 'DENY'; approver: GateApprover; reason?: string }
  | { type: 'EXPIRE' }
  | { type: 'WITHDRAW'; reason?: string };

/** Final states of a gate. */
export type GateDecision = 'approved' | 'denied' | 'expired' | 'withdrawn';

/** Who may decide the gate now: the approvers, plus the second approvers once escalated. */
export function currentApprovers(ctx: GateContext): GateApproverRef[] {
  return [...ctx.approvers, ...(ctx.escalated ? (ctx.secondApprovers ?? []) : [])];
}

/** Why `approver` may not decide this gate, or undefined when it may. */
export function approverRefusal(ctx: GateContext, approver: GateApprover): string | undefined {
  if (!APPROVING_TIERS.includes(approver.trustTier)) return `a ${approver.trustTier} channel may not decide a gate`;
  const listed = currentApprovers(ctx).some((a) => a.identity === approver.identity && a.channel === approver.channel);
  if (!listed) {
    const why = ctx.ownersOnly ? ' (only an owner may decide it: it follows untrusted content)' : '';
    return `"${approver.identity}" on channel "${approver.channel}" is not an approver of gate ${ctx.gateId}${why}`;
  }
  return undefined;
}

// Transitions shared by every undecided state: a decision, expiry or withdrawal can end the gate
// whether or not it was reminded or escalated.
const deciding = {
  APPROVE: { guard: 'mayDecide', target: 'approved', actions: 'recordDecision' },
  DENY: { guard: 'mayDecide', target: 'denied', actions: 'recordDecision' },
  EXPIRE: 'expired',
  WITHDRAW: { target: 'withdrawn', actions: 'recordWithdrawal' },
} as const;
const escalating = { ESCALATE: { guard: 'hasSecondApprovers', target: 'escalated', actions: 'markEscalated' } } as const;

/** The gate machine: open → reminded → (escalated) → approved | denied | expired | withdrawn. */
export const gateMachine = setup({
  types: {
    context: {} as GateContext,
    events: {} as GateEvent,
    input: {} as GateInput,
  },
  guards: {
    mayDecide: ({ context, event }) =>
      (event.type === 'APPROVE' || event.type === 'DENY') && approverRefusal(context, event.approver) === undefined,
    hasSecondApprovers: ({ context }) => (context.secondApprovers?.length ?? 0) > 0,
  },
  actions: {
    recordDecision: assign(({ event }) =>
      event.type === 'APPROVE' || event.type === 'DENY'
        ? { decidedBy: event.approver, ...(event.reason ? { reason: event.reason } : {}) }
        : {},
    ),
    recordWithdrawal: assign(({ event }) => (event.type === 'WITHDRAW' && event.reason ? { reason: event.reason } : {})),
    markEscalated: assign({ escalated: true }),
  },
}).createMachine({
  id: 'gate',
  context: ({ input }) => ({ ...input, escalated: false }),
  initial: 'open',
  states: {
    open: {
      on: {
        REMIND: 'reminded',
        ...escalating,
        ...deciding,
      },
    },
    reminded: {
      on: {
        ...escalating,
        ...deciding,
      },
    },
    escalated: {
      on: {
        ...deciding,
      },
    },
    approved: { type: 'final' },
    denied: { type: 'final' },
    expired: { type: 'final' },
    withdrawn: { type: 'final' },
  },
});

/** Undecided gate states. */
export const OPEN_GATE_STATES = ['open', 'reminded', 'escalated'] as const;
