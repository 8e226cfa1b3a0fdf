/** The workflows a worker registers (the bundler's entry point). */
import './sandbox-zod.js';
export { sessionWorkflow } from './session-workflow.js';
export { turnWorkflow } from './turn-workflow.js';
export { missionWorkflow } from './mission/mission-workflow.js';
export { scheduledMissionWorkflow } from './scheduled-mission-workflow.js';
