/**
 * A mission's gates: a gate is opened for exactly one pending call and waits durably until it is
 * decided (only by the decision Updates, handlers.ts), expires or is withdrawn (a cancel), reminding
 * and escalating on the way. Reminder, escalation and expiry are durable timers (`condition` with a
 * timeout); the gate machine never reads a clock. Everyone asked is told how it ended.
 */
import { condition } from '@temporalio/workflow';
import { createActor, type Actor } from 'xstate';
import type { MissionNotice } from '../../activities/mission-activities.js';
import { OWNERS_ONLY_NOTE } from '../../core/gate-approvers.js';
import { describeCall } from '../../core/tools/describe-call.js';
import { gateMachine, type GateApproverRef, type GateEvent } from '../../machines/index.js';
import { acts, type MissionBookkeeping } from './activities.js';
import { tellOutcome } from './notices.js';
import type { MissionRun } from './state.js';
import { checked } from './view.js';

/** The call a gate is for, and how long it stays open. */
export interface PendingGateCall {
  tool: string;
  input: unknown;
  reason: string;
  expireMs: number;
  /** What its approvers are told if it expires. */
  expiredText: string;
}

/** A gate's end: how it was decided, and by whom (the decision's words are the denier's, for the result only). */
export interface GateEnd {
  value: string;
  gateId: string;
  tool: string;
  inputHash: string;
  by: { identity: string; channel: string } | undefined;
  reason: string | undefined;
}

/** What every notice of a gate says about it (channels that show a full request use these). */
type GateAbout = Required<Omit<MissionNotice, 'missionId' | 'gateId' | 'kind' | 'approvers' | 'text'>>;

/** One open gate, while the mission waits at it. */
interface OpenGate {
  g: Actor<typeof gateMachine>;
  gateId: string;
  pending: PendingGateCall;
  openedAt: number;
  about: GateAbout;
  /** Who decides: the worker's answer (after untrusted content, the owners only), or for older histories the definition's. */
  approvers: GateApproverRef[];
  secondApprovers: GateApproverRef[] | undefined;
  /** When it escalates: never for a gate with no one to escalate to (an owners-only gate). */
  escalateMs: number | undefined;
  reminded: boolean;
  escalated: boolean;
}

const names = (list: readonly GateApproverRef[]): string[] => list.map((a) => `${a.identity}@${a.channel}`);

/**
 * Opens a gate for exactly one pending call and waits durably until it is decided, expires (after
 * `pending.expireMs`) or is withdrawn (a cancel); everyone asked is told how it ended. The caller
 * moves the mission.
 */
export async function awaitGate(
  run: MissionRun,
  step: number,
  pending: PendingGateCall,
  onOpened: (gateId: string) => void,
  // Local only for a step turn's escalation, which its child's result decides; a budget gate or an
  // approval wait follows a check a cancel arriving on a retried task could turn the other way.
  open: MissionBookkeeping['openGate'] = acts.openGate,
): Promise<GateEnd> {
  const gate = await openGate(run, step, pending, onOpened, open);
  await waitForDecision(run, gate);
  checked(run);
  const decided = gate.g.getSnapshot();
  await tellGateEnd(run, gate);
  const { decidedBy: by, reason } = decided.context;
  return { value: decided.value, gateId: gate.gateId, tool: decided.context.tool, inputHash: decided.context.inputHash, by, reason };
}

/** What the worker answered when it recorded a gate. */
type GateOpened = Awaited<ReturnType<MissionBookkeeping['openGate']>>;

/** Records the gate (the worker hashes the call), starts its actor and tells the approvers what it is for. */
async function openGate(
  run: MissionRun,
  step: number,
  pending: PendingGateCall,
  onOpened: (gateId: string) => void,
  open: MissionBookkeeping['openGate'],
): Promise<OpenGate> {
  const { def, missionId } = run;
  run.gateSeq++;
  const gateId = `${missionId}/gate-${run.gateSeq}`;
  const opened = await open({ definition: def, gateId, step, tool: pending.tool, input: pending.input ?? null });
  const deciders = whoDecides(run, opened);
  const { approvers, secondApprovers } = deciders;
  const g = createActor(gateMachine, {
    input: {
      gateId,
      tool: pending.tool,
      inputHash: opened.inputHash,
      approvers,
      ...(secondApprovers && secondApprovers.length > 0 ? { secondApprovers } : {}),
      ...(opened.ownersOnly ? { ownersOnly: true } : {}),
    },
  });
  run.gate = g;
  g.subscribe({ error: (err) => (run.machineError = { which: 'gate', err }) });
  g.start();
  onOpened(gateId);
  const openedAt = Date.now();
  const about = gateAbout(run, pending, opened, openedAt);
  run.gateView = { call: about.call, why: about.why, askedBy: about.askedBy };
  await acts.notifyApprovers({
    missionId,
    gateId,
    kind: 'opened',
    approvers,
    text: `${pending.tool} needs approval: ${pending.reason}`,
    ...about,
  });
  return { g, gateId, pending, openedAt, about, ...deciders, reminded: false, escalated: false };
}

/**
 * Who decides is the worker's answer (after untrusted content: the owners only); a history recorded
 * before it answered this asked the definition's approvers. A gate with no one to escalate to (an
 * owners-only gate) never escalates.
 */
function whoDecides(run: MissionRun, opened: GateOpened): Pick<OpenGate, 'approvers' | 'secondApprovers' | 'escalateMs'> {
  const approvers = opened.approvers ?? run.def.approvers;
  const secondApprovers = opened.approvers ? opened.secondApprovers : run.def.secondApprovers;
  const escalateMs = secondApprovers && secondApprovers.length > 0 ? run.timers.escalateMs : undefined;
  return { approvers, secondApprovers, escalateMs };
}

/** What every notice of the gate says about it. The call is rendered here, once (bounded lines, secrets redacted), never shipped raw to every notice. */
function gateAbout(run: MissionRun, pending: PendingGateCall, opened: GateOpened, openedAt: number): GateAbout {
  const { def } = run;
  return {
    goal: def.goal,
    tool: pending.tool,
    inputHash: opened.inputHash,
    // An owners-only gate says why its approvers are the owners and not whoever asked.
    why: opened.ownersOnly ? `${pending.reason}. ${OWNERS_ONLY_NOTE}` : pending.reason,
    deadline: openedAt + pending.expireMs,
    call: describeCall(pending.tool, pending.input).lines,
    askedBy: { identity: def.channel.sender, channel: def.channel.name },
  };
}

/** Waits until the gate is decided, withdrawn by a cancel, or expired, firing its reminder and escalation when due. */
async function waitForDecision(run: MissionRun, gate: OpenGate): Promise<void> {
  const { g, openedAt, pending, escalateMs } = gate;
  const { reminderMs } = run.timers;
  const isDecided = () => g.getSnapshot().status !== 'active';
  while (!isDecided()) {
    const due = Math.min(
      gate.reminded ? Infinity : openedAt + reminderMs,
      gate.escalated || escalateMs === undefined ? Infinity : openedAt + escalateMs,
      openedAt + pending.expireMs,
    );
    const woke = await condition(() => isDecided() || run.cancelled() !== undefined, Math.max(1, due - Date.now()));
    if (isDecided()) break;
    const c = run.cancelled();
    if (c) {
      // A decision the worker is checking right now settles first.
      await condition(() => run.deciding === 0);
      if (isDecided()) break;
      g.send({ type: 'WITHDRAW', reason: c.reason });
      break;
    }
    if (woke) continue;
    const expired = await fireDueTimers(run, gate);
    // Expiry last, and only if no decision arrived meanwhile (an update may have landed during the awaits,
    // or be under verification right now: that one settles first).
    if (expired) {
      await condition(() => run.deciding === 0);
      if (!isDecided()) g.send({ type: 'EXPIRE' });
    }
  }
}

/** Sends the reminder and the escalation that are due (audited, approvers told); says whether the gate's expiry is due too. */
async function fireDueTimers(run: MissionRun, gate: OpenGate): Promise<boolean> {
  const { missionId } = run;
  const { g, gateId, openedAt, pending, about, approvers, secondApprovers, escalateMs } = gate;
  const { reminderMs } = run.timers;
  const now = Date.now();
  const fire: GateEvent[] = [];
  if (!gate.reminded && now >= openedAt + reminderMs) {
    gate.reminded = true;
    fire.push({ type: 'REMIND' });
  }
  if (!gate.escalated && escalateMs !== undefined && now >= openedAt + escalateMs) {
    gate.escalated = true;
    fire.push({ type: 'ESCALATE' });
  }
  if (now >= openedAt + pending.expireMs) fire.push({ type: 'EXPIRE' });
  for (const e of fire) {
    if (e.type === 'EXPIRE') break;
    g.send(e);
    checked(run);
    if (e.type === 'REMIND') {
      await run.audit({ type: 'GateReminded', gateId, afterMs: now - openedAt });
      await acts.notifyApprovers({
        missionId,
        gateId,
        kind: 'reminder',
        approvers,
        text: `still waiting for a decision on ${pending.tool}`,
        ...about,
      });
    } else {
      const all = [...approvers, ...(secondApprovers ?? [])];
      await run.audit({ type: 'GateEscalated', gateId, approvers: names(all), afterMs: now - openedAt });
      await acts.notifyApprovers({
        missionId,
        gateId,
        kind: 'escalated',
        approvers: secondApprovers ?? [],
        text: `escalated to you: ${pending.tool} needs approval`,
        ...about,
      });
    }
  }
  return fire.some((e) => e.type === 'EXPIRE');
}

/** Tells everyone asked how the gate ended (GateApproved / GateDenied were audited by the activity that verified the decision). */
async function tellGateEnd(run: MissionRun, gate: OpenGate): Promise<void> {
  const { missionId } = run;
  const { g, gateId, openedAt, pending, about, approvers, secondApprovers } = gate;
  const { decidedBy: by, reason } = g.getSnapshot().context;
  // Everyone who was asked about this gate (second approvers only once it escalated).
  const allTold = () => [...approvers, ...(gate.escalated ? (secondApprovers ?? []) : [])];
  const notice = (kind: MissionNotice['kind'], approvers: GateApproverRef[], text: string): MissionNotice => ({
    missionId,
    gateId,
    kind,
    approvers,
    text,
    ...about,
  });
  switch (g.getSnapshot().value) {
    case 'approved':
      await tellOutcome(run, notice('decided', allTold(), `approved by ${by?.identity ?? '?'}@${by?.channel ?? '?'}`));
      break;
    case 'denied':
      await tellOutcome(
        run,
        notice('decided', allTold(), `denied by ${by?.identity ?? '?'}@${by?.channel ?? '?'}${reason ? `: ${reason}` : ''}`),
      );
      break;
    case 'expired':
      await run.audit({ type: 'GateExpired', gateId, afterMs: Date.now() - openedAt });
      await tellOutcome(run, notice('expired', approvers, pending.expiredText));
      break;
    case 'withdrawn':
      await run.audit({ type: 'GateWithdrawn', gateId });
      await tellOutcome(run, notice('withdrawn', allTold(), `withdrawn: ${reason ?? 'mission cancelled'}`));
      break;
  }
}
