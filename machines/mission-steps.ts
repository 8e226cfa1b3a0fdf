/**
 * The kinds of mission step (docs/MISSIONS.md), pure and workflow-safe:
 * - a turn step (`{ text }` or `{ kind: 'turn', text }`): an ordinary turn; escalation opens a gate;
 * - `wait`: a durable timer, for a duration (`{ kind: 'wait', for: '3d' }`) or until an instant
 *   (`{ kind: 'wait', until: '2027-03-01T09:00:00+01:00', timeZone: 'Europe/Berlin' }`; the
 *   instant always carries its UTC offset — the edge resolves a local time in a time zone — so
 *   the workflow never needs time-zone data);
 * - `notify`: one message to the mission's owner on the channel it came from (or their inbox).
 */
import { INSTANT } from '../core/schemas.js';
import { durationMs } from './duration.js';

/** A turn step; `kind` is absent on definitions made before step kinds existed. */
export interface TurnStep {
  kind?: 'turn';
  text: string;
}
/** Waits for a duration from when the step begins. */
export interface WaitForStep {
  kind: 'wait';
  for: string | number;
}
/** Waits until an instant (ISO 8601 with a UTC offset); `timeZone` is how the person said it, for display. */
export interface WaitUntilStep {
  kind: 'wait';
  until: string;
  timeZone?: string;
}
/** Delivers `text` to the mission's owner. */
export interface NotifyStep {
  kind: 'notify';
  text: string;
}
/** One step of a mission. */
export type MissionStep = TurnStep | WaitForStep | WaitUntilStep | NotifyStep;

/** True for a step that runs as a turn. */
export const isTurnStep = (s: MissionStep): s is TurnStep => s.kind === undefined || s.kind === 'turn';

/** Milliseconds since the epoch of an instant; throws on anything that is not one (with its offset). */
export function instantMs(until: string): number {
  const ms = INSTANT.test(until) ? Date.parse(until) : Number.NaN;
  if (!Number.isFinite(ms)) throw new Error(`invalid instant "${until}" (use e.g. 2027-03-01T09:00:00+01:00)`);
  return ms;
}

/** When a wait step that began at `beganAt` ends (epoch ms); throws on a malformed step. */
export function waitEndsAt(step: WaitForStep | WaitUntilStep, beganAt: number): number {
  return 'until' in step ? instantMs(step.until) : beganAt + durationMs(step.for);
}

/** Checks every step's durations and instants (the schema checked the shapes); throws naming the step. */
export function checkSteps(steps: readonly MissionStep[]): void {
  steps.forEach((s, i) => {
    try {
      if (s.kind === 'wait') waitEndsAt(s, 0);
    } catch (e) {
      throw new Error(`step ${i + 1}: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
}

/** One line saying what a step does (approvers, the UI, `mission show`). */
export function stepLabel(s: MissionStep): string {
  if (isTurnStep(s)) return s.text;
  if (s.kind === 'notify') return `notify the owner: ${s.text}`;
  if ('until' in s) return `wait until ${s.until}${s.timeZone ? ` (${s.timeZone})` : ''}`;
  return `wait ${typeof s.for === 'number' ? `${s.for} ms` : s.for}`;
}
