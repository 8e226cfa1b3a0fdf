/**
 * `missionMachine`: a mission's steps in order, each run as a turn; a step that escalates waits
 * at a gate. Pure and workflow-safe: the hosting workflow runs the turns and the gates and
 * reports their results as events.
 */
import { assign, setup } from 'xstate';

/** What the expiry of a gate does to the mission. */
export type OnExpire = 'fail' | 'skip-step';

/** Inputs of the mission machine. */
export interface MissionMachineInput {
  stepCount: number;
  onExpire: OnExpire;
}

/** A grant the next run of the current step carries: one call of `tool` with exactly `inputHash`. */
export interface StepGrant {
  gateId: string;
  tool: string;
  inputHash: string;
}

/** The mission's context. */
export interface MissionContext extends MissionMachineInput {
  /** Index of the step running (or waiting) now. */
  step: number;
  /** How many times the current step has been started (1-based once running). */
  attempt: number;
  gateId?: string;
  grant?: StepGrant;
  failure?: string;
}

/** Events the mission accepts. */
export type MissionEvent =
  | { type: 'START' }
  | { type: 'STEP_DONE' }
  /** The step is done and ends the mission (a `waitFor` branch that says so). */
  | { type: 'FINISH' }
  | { type: 'STEP_ESCALATED'; gateId: string }
  | { type: 'STEP_FAILED'; reason: string }
  | { type: 'GATE_APPROVED'; grant: StepGrant }
  | { type: 'GATE_DENIED'; reason: string }
  | { type: 'GATE_EXPIRED' }
  | { type: 'CANCEL' };

/** Final states of a mission. */
export type MissionEnd = 'completed' | 'failed' | 'cancelled' | 'expired';

/** The mission machine: planned → running step k → waiting at gate → … → completed | failed | cancelled | expired. */
export const missionMachine = setup({
  types: {
    context: {} as MissionContext,
    events: {} as MissionEvent,
    input: {} as MissionMachineInput,
  },
  guards: {
    hasNoSteps: ({ context }) => context.stepCount === 0,
    isLastStep: ({ context }) => context.step + 1 >= context.stepCount,
    skipsOnExpiry: ({ context }) => context.onExpire === 'skip-step',
    allStepsDone: ({ context }) => context.step >= context.stepCount,
  },
  actions: {
    beginStep: assign(({ context }) => ({ attempt: context.attempt + 1 })),
    advance: assign(({ context }) => ({ step: context.step + 1, attempt: 0, gateId: undefined, grant: undefined })),
    openGate: assign(({ event }) => (event.type === 'STEP_ESCALATED' ? { gateId: event.gateId, grant: undefined } : {})),
    takeGrant: assign(({ event }) => (event.type === 'GATE_APPROVED' ? { grant: event.grant, gateId: undefined } : {})),
    recordFailure: assign(({ event }) => (event.type === 'STEP_FAILED' || event.type === 'GATE_DENIED' ? { failure: event.reason } : {})),
    recordExpiry: assign({ failure: 'the gate expired without an answer' }),
  },
}).createMachine({
  id: 'mission',
  context: ({ input }) => ({ ...input, step: 0, attempt: 0 }),
  initial: 'planned',
  states: {
    planned: {
      on: {
        START: [{ guard: 'hasNoSteps', target: 'completed' }, { target: 'running' }],
        CANCEL: 'cancelled',
      },
    },
    running: {
      entry: 'beginStep',
      on: {
        STEP_DONE: [
          { guard: 'isLastStep', target: 'completed', actions: 'advance' },
          { target: 'running', reenter: true, actions: 'advance' },
        ],
        FINISH: { target: 'completed', actions: 'advance' },
        STEP_ESCALATED: { target: 'waiting', actions: 'openGate' },
        STEP_FAILED: { target: 'failed', actions: 'recordFailure' },
        CANCEL: 'cancelled',
      },
    },
    waiting: {
      on: {
        // The same step runs again, carrying the one-shot grant.
        GATE_APPROVED: { target: 'running', actions: 'takeGrant' },
        GATE_DENIED: { target: 'failed', actions: 'recordFailure' },
        GATE_EXPIRED: [
          { guard: 'skipsOnExpiry', actions: 'advance', target: 'afterSkip' },
          { target: 'expired', actions: 'recordExpiry' },
        ],
        CANCEL: 'cancelled',
      },
    },
    // A skipped step may have been the last one.
    afterSkip: {
      always: [{ guard: 'allStepsDone', target: 'completed' }, { target: 'running' }],
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
    expired: { type: 'final' },
  },
});
