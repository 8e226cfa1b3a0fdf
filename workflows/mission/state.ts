/**
 * What one run of `missionWorkflow` holds while it runs: the verified definition, the mission and
 * gate actors, the counters carried through continue-as-new, and what its handlers and its loop
 * share. One object, passed to each concern's functions; it lives in the workflow's own run, never
 * in a module (the modules are shared by every workflow of a worker thread: workflows/sandbox-shared.ts).
 */
import type { Actor } from 'xstate';
import type { MissionAuditEvent } from '../../activities/mission-activities.js';
import { NO_SPEND, type Spend, type SpendBudget } from '../../core/spend.js';
import { checkSteps, durationMs, type gateMachine, type missionMachine } from '../../machines/index.js';
import type { GateCallView, MissionArgs, MissionDefinition, MissionResult, PendingGate } from '../mission-messages.js';
import { inputFailure } from '../inputs.js';
import { acts, type MissionBookkeeping } from './activities.js';
import { restoreMission } from './restore.js';

/** Defaults of a mission's gate timers. */
export const GATE_DEFAULTS = { reminderAfter: '24h', expireAfter: '72h' } as const;
const DEFAULT_HISTORY_LIMIT = 4_000;

/** A mission's gate timers in milliseconds (escalation only with second approvers to escalate to). */
export interface GateTimers {
  reminderMs: number;
  expireMs: number;
  escalateMs: number | undefined;
}

/** The definition's gate timers; a malformed duration or step list fails the mission as a refused input. */
export function checkDefinition(def: MissionDefinition): GateTimers {
  try {
    const timers = {
      reminderMs: durationMs(def.reminderAfter ?? GATE_DEFAULTS.reminderAfter),
      expireMs: durationMs(def.expireAfter ?? GATE_DEFAULTS.expireAfter),
      escalateMs: def.escalateAfter !== undefined && (def.secondApprovers?.length ?? 0) > 0 ? durationMs(def.escalateAfter) : undefined,
    };
    checkSteps(def.steps);
    return timers;
  } catch (e) {
    throw inputFailure('mission definition', e instanceof Error ? e.message : String(e));
  }
}

/** `Omit` that distributes over the audit event union. */
export type MissionEventBody = MissionAuditEvent extends infer E
  ? E extends MissionAuditEvent
    ? Omit<E, 'turnId' | 'missionId'>
    : never
  : never;

/** The signature of `missionWorkflow` (its modules take its type from here: it imports them). */
export type MissionWorkflow = (args: MissionArgs) => Promise<MissionResult>;

/** The wait a `waitFor` step holds open for an inbound event. */
export interface OpenWait {
  waitKey: string;
  step: number;
  arrived: boolean;
}

/** The state of one mission run, shared by its loop, its gates and its message handlers. */
export class MissionRun {
  readonly def: MissionDefinition;
  readonly missionId: string;
  readonly historyLimit: number;
  /** The mission actor, fresh or restored from the carried snapshot. */
  readonly mission: Actor<typeof missionMachine>;
  /** An error an actor reported to its observer (turned into a failure at the next check). */
  machineError: { which: string; err: unknown } | undefined;
  /** The current gate's actor, and what its notices showed about the call (for the status query). */
  gate: Actor<typeof gateMachine> | undefined;
  gateView: GateCallView | undefined;
  gateSeq: number;
  stepsRun: number;
  /** Steps run since this run started (continue-as-new waits for one, so a run always makes progress). */
  stepsThisRun = 0;
  /** A confirmation mission starts at its gate: the asking turn's escalation stands in for step 1's first run. */
  seeded: PendingGate | undefined;
  /** A plan step's drafted plan, from the draft until its approved grant is used (carried through continue-as-new). */
  pendingPlan: unknown;
  /**
   * What the step turns spent (summed from their outcomes) and the budget it runs under: the verified
   * definition's or the worker's (openMission), or what an approver last raised it to (carried, attested).
   */
  spent: Spend;
  budget: SpendBudget | undefined;
  /** What the person who denied a gate said (for the result only). */
  deniedSaying: string | undefined;
  /** What a wait step waits for (the UI's reason for 'waiting' outside a gate). */
  waitingFor: string | undefined;
  /** The wait a `waitFor` step holds open, and events being checked by the worker (the wait does not time out under them). */
  openWait: OpenWait | undefined;
  checkingEvents = 0;
  /** Decisions being checked by the worker: the gate does not expire or withdraw under them. */
  deciding = 0;
  /** What the operator view last showed, and what the search attributes last said (view.ts). */
  published = '';
  publishedCommands = '';
  /** Gate outcome notices on their way, and the first that failed (notices.ts). */
  readonly telling: Promise<void>[] = [];
  tellFailure: unknown;
  // Set by the signal handler and by a Temporal cancel; read through cancelled() so narrowing never goes stale.
  private cancelState: { reason: string } | undefined;

  /** Restores the mission actor (a snapshot that cannot be restored fails the mission now). */
  constructor(
    readonly args: MissionArgs,
    readonly timers: GateTimers,
    /** The mission's bookkeeping activities: local, or remote for runs started before they were. */
    readonly books: MissionBookkeeping,
    openedBudget: SpendBudget | undefined,
  ) {
    this.def = args.definition;
    this.missionId = this.def.missionId;
    this.historyLimit = args.historyLimit ?? DEFAULT_HISTORY_LIMIT;
    const carried = args.carried;
    this.mission = restoreMission(args, (err) => (this.machineError = { which: 'mission', err }));
    this.gateSeq = carried?.gateSeq ?? 0;
    this.stepsRun = carried?.stepsRun ?? 0;
    this.seeded = !carried ? this.def.pendingGate : undefined;
    this.pendingPlan = carried?.plan;
    this.spent = carried?.spent ?? NO_SPEND;
    this.budget = carried?.budget ?? openedBudget;
  }

  /** The cancel (signal or Temporal cancel) that ends this mission, if one came. */
  cancelled(): { reason: string } | undefined {
    return this.cancelState;
  }

  /** Notes a cancel; the first one's reason stands. */
  cancel(reason: string): void {
    this.cancelState ??= { reason };
  }

  /** Counts a step that ran. */
  countStep(): void {
    this.stepsRun++;
    this.stepsThisRun++;
  }

  /** Appends a mission event to the audit log (remote: a timer or a cancel decides most of them). */
  audit(event: MissionEventBody): Promise<void> {
    return acts.recordMissionEvent(this.entry(event));
  }

  /**
   * Records a step turn's end, locally: the child's result is in the history, so a retried workflow
   * task records the same entry. The other transitions stay remote (`audit`): a timer or a cancel
   * decides them, and a retried task can see them differently (a later clock, a cancel that arrived
   * meanwhile), which a local entry written by the failed attempt would contradict.
   */
  auditStepTurnEnd(event: Extract<MissionEventBody, { type: 'MissionStepFinished' }>): Promise<void> {
    return this.books.recordMissionEvent(this.entry(event));
  }

  private entry(event: MissionEventBody): MissionAuditEvent {
    return { turnId: this.missionId, missionId: this.missionId, ...event } as MissionAuditEvent;
  }
}
