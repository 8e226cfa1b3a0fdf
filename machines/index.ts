/** The mission and gate machines (pure, workflow-safe). */
export {
  missionMachine,
  type MissionContext,
  type MissionEvent,
  type MissionEnd,
  type MissionMachineInput,
  type OnExpire,
  type StepGrant,
} from './mission-machine.js';
export {
  gateMachine,
  approverRefusal,
  currentApprovers,
  APPROVING_TIERS,
  OPEN_GATE_STATES,
  type GateApprover,
  type GateApproverRef,
  type GateContext,
  type GateDecision,
  type GateEvent,
  type GateInput,
} from './gate-machine.js';
export { durationMs } from './duration.js';
export {
  checkSteps,
  eventLabel,
  eventMatches,
  instantMs,
  isTurnStep,
  stepLabel,
  waitEndsAt,
  type MissionEventFacts,
  type MissionEventMatch,
  type MissionStep,
  type NoticeRecipient,
  type NotifyStep,
  type PlanStep,
  type WaitBranch,
  type WaitForEventStep,
  type TurnStep,
  type WaitForStep,
  type WaitUntilStep,
} from './mission-steps.js';
