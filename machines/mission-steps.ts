/**
 * The kinds of mission step (docs/MISSIONS.md), pure and workflow-safe:
 * - a turn step (`{ text }` or `{ kind: 'turn', text }`): an ordinary turn; escalation opens a gate;
 * - `wait`: a durable timer, for a duration (`{ kind: 'wait', for: '3d' }`) or until an instant
 *   (`{ kind: 'wait', until: '2027-03-01T09:00:00+01:00', timeZone: 'Europe/Berlin' }`; the
 *   instant always carries its UTC offset — the edge resolves a local time in a time zone — so
 *   the workflow never needs time-zone data);
 * - `notify`: one message to the mission's owner on the channel it came from (or their inbox);
 * - `waitFor`: an inbound event — an e-mail from a person (in a thread), a Telegram message from a
 *   person or containing some words — delivered by the channel adapter that authenticated it, or a
 *   timeout; each outcome either continues with the next step or ends the mission.
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
/**
 * Delivers `text` to the mission's owner — or, with `to`, to those people on their channels (each
 * needs `channel.send:<channel>` in the mission's capabilities, as the `channel.send` tool would).
 */
export interface NotifyStep {
  kind: 'notify';
  text: string;
  to?: NoticeRecipient[];
}

/** Someone a notice goes to: a channel name and its own address form (a Telegram chat id, an e-mail address). */
export interface NoticeRecipient {
  channel: string;
  to: string;
}
/**
 * What a `waitFor` step waits for. E-mail: a mail whose From the channel authenticated (DKIM/SPF
 * aligned) as `from`, and, with `thread`, a reply in that thread (the Message-ID is in its
 * In-Reply-To or References). Telegram: a message from `from` (a user id or `@username`) and/or
 * whose text contains `contains` (case-insensitive; no regular expressions: the pattern is drafted
 * by a model and run against anyone's text). Matrix: a message whose sender — the user id the
 * homeserver set, never a display name — is `from`, in room `room` when given, and/or containing
 * `contains`, as for Telegram. Approval: a yes from one of the mission's approvers to
 * `question`, decided like a gate (only by a verified approver's decision).
 */
export type MissionEventMatch =
  | { source: 'email'; from: string; thread?: string }
  | { source: 'telegram'; from?: string; contains?: string }
  | { source: 'matrix'; from?: string; room?: string; contains?: string }
  /** A yes from one of the mission's approvers (a gate for the question): approved is the event; denied or no answer, the timeout. */
  | { source: 'approval'; question: string };

/** What a `waitFor` step does next: go on with the next step, or end the mission (completed). */
export type WaitBranch = 'continue' | 'end';

/** Waits for an inbound event, at most `within`; `onEvent` (default continue) and `onTimeout` (default end) say what follows. */
export interface WaitForEventStep {
  kind: 'waitFor';
  event: MissionEventMatch;
  within: string | number;
  onEvent?: WaitBranch;
  onTimeout?: WaitBranch;
}

/**
 * Plans the mission from its goal: the model drafts the steps and the capabilities they need, one
 * plan gate shows the whole plan, and only an approved plan runs (as a mission of its own, with
 * exactly the plan's capability set).
 */
export interface PlanStep {
  kind: 'plan';
}

/** One step of a mission. */
export type MissionStep = TurnStep | WaitForStep | WaitUntilStep | NotifyStep | WaitForEventStep | PlanStep;

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
      if (s.kind === 'waitFor') {
        durationMs(s.within);
        if ((s.event.source === 'telegram' || s.event.source === 'matrix') && s.event.from === undefined && s.event.contains === undefined)
          throw new Error(`a ${s.event.source === 'matrix' ? 'Matrix' : 'Telegram'} wait needs "from" or "contains"`);
      }
    } catch (e) {
      throw new Error(`step ${i + 1}: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
}

/** What a `waitFor` step waits for, in words. */
export function eventLabel(e: MissionEventMatch): string {
  if (e.source === 'approval') return `a yes to "${e.question}"`;
  if (e.source === 'email') return `an e-mail from ${e.from}${e.thread ? ` in thread <${e.thread}>` : ''}`;
  const where = e.source === 'matrix' && e.room ? ` in ${e.room}` : '';
  const platform = e.source === 'matrix' ? 'Matrix' : 'Telegram';
  return `a ${platform} message${e.from ? ` from ${e.from}` : ''}${where}${e.contains ? ` containing "${e.contains}"` : ''}`;
}

/** One line saying what a step does (approvers, the UI, `mission show`). */
export function stepLabel(s: MissionStep): string {
  if (isTurnStep(s)) return s.text;
  if (s.kind === 'notify') return `notify ${s.to ? s.to.map((r) => `${r.channel}:${r.to}`).join(', ') : 'the owner'}: ${s.text}`;
  if (s.kind === 'plan') return 'plan the steps from the goal (the plan is approved before any of it runs)';
  if (s.kind === 'waitFor') {
    const within = typeof s.within === 'number' ? `${s.within} ms` : s.within;
    return `wait up to ${within} for ${eventLabel(s.event)}; then ${s.onEvent ?? 'continue'}, on timeout ${s.onTimeout ?? 'end'}`;
  }
  if ('until' in s) return `wait until ${s.until}${s.timeZone ? ` (${s.timeZone})` : ''}`;
  return `wait ${typeof s.for === 'number' ? `${s.for} ms` : s.for}`;
}

/**
 * What a channel adapter authenticated about an inbound event: who sent it (an e-mail address, lower
 * case, a Telegram user id or a Matrix user id), their Telegram @username, the Matrix room it was
 * sent in, the thread ids an e-mail refers to, and
 * (Telegram) which `contains` words it found in the text. Never the text itself.
 */
export interface MissionEventFacts {
  source: MissionEventMatch['source'];
  from: string;
  username?: string;
  threadIds?: string[];
  /** The Matrix room id the message was sent in. */
  room?: string;
  contains?: string;
  /** The sender's tier on that channel (Telegram, Matrix): a wait for words alone takes them only from a sender who is not Untrusted. */
  tier?: string;
}

/**
 * Whether `facts` satisfy `match`. The adapter calls it with the message `text` (for `contains`);
 * the worker re-checks the facts the adapter signed, without the text (the adapter's `contains`
 * must name exactly the step's words).
 */
export function eventMatches(match: MissionEventMatch, facts: MissionEventFacts, text?: string): boolean {
  // An approval is decided at a gate, never by a channel event.
  if (match.source === 'approval' || facts.source !== match.source) return false;
  if (match.source === 'email')
    return facts.from === match.from.toLowerCase() && (match.thread === undefined || (facts.threadIds ?? []).includes(match.thread));
  // Matrix identity is the sender's user id, compared exactly: there is no @username to look up.
  if (match.source === 'matrix' && (match.from ?? facts.from) !== facts.from) return false;
  if (match.source === 'matrix' && match.room !== undefined && match.room !== facts.room) return false;
  if (match.source === 'telegram' && match.from !== undefined) {
    const byName = match.from.startsWith('@') && facts.username !== undefined;
    if (byName ? match.from.slice(1).toLowerCase() !== facts.username!.toLowerCase() : match.from !== facts.from) return false;
  }
  // Words alone, from anyone who can write to the bot, would let a stranger end the wait.
  if (match.from === undefined && (facts.tier === undefined || facts.tier === 'Untrusted')) return false;
  if (match.contains === undefined) return true;
  return text !== undefined ? text.toLowerCase().includes(match.contains.toLowerCase()) : facts.contains === match.contains;
}
