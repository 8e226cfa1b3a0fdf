/**
 * Missions over the Temporal client for local channels (the REST channel, and through it
 * `aivyx mission …`): create, list by dashboard state, show, approve/deny a gate, cancel.
 * Approvals made here are by `local-user` on the `cli` channel at tier Trusted; the workflow's
 * update validator still decides whether that approver may decide the gate. Chat channels get
 * its approvals for people they verified (`decideAs`), `waitFor` events and owners' records, through
 * their ports (channels/ports.ts). The spec a person gives is checked in channels/mission-input.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ScheduleAlreadyRunning, type Client } from '@temporalio/client';
import { gateDecisionBody } from '../core/authority.js';
import { AivyxError } from '../core/errors.js';
import { CapabilitySet, Scope } from '../core/capability/index.js';
import { isTemporalUnreachable, isWorkflowNotFound } from '../infra/temporal/client-errors.js';
import { AivyxMissionState, AivyxOpenGate } from '../core/search-attributes.js';
import { defineStep, noticeCapabilities, type DefinedStep, type MissionStepSpec, type MissionScheduleSpec } from '../core/mission-spec.js';
import { durationMs } from '../core/duration.js';
import type { GateApprover, GateApproverRef } from '../machines/index.js';
import { offerMissionEvent, type InboundEvent, type MissionEventDeps } from './kit/mission-events.js';
import type { Attestor } from '../infra/attestation.js';
import {
  approveGateUpdate,
  cancelMissionSignal,
  denyGateUpdate,
  missionStartMetadata,
  missionStatusQuery,
  type GateDecisionRequest,
  type GateDecisionResult,
  type MissionArgs,
  type MissionDefinition,
  type ScheduledMissionArgs,
} from '../workflows/mission-messages.js';
import type { missionWorkflow } from '../workflows/mission/mission-workflow.js';
import type { AuditPort, MissionRecord, ScheduleRecord } from '../activities/ports.js';
import type { MissionOwners } from '../core/mission-owner.js';
import { missionRecord, missionRecords, scheduleRecord, scheduleRecords, verifiedDefinition } from './mission-records.js';
import { LOCAL_APPROVER, parseApprovers, parseMissionSpec, type MissionSpec } from './mission-input.js';
import type { ChatMissionPort, LocalMissionPort, MissionSummary, MissionView, ScheduleRow } from './ports.js';

// app/confirmations.ts and tests take the local approver from here, beside the gateway that approves as it.
export { LOCAL_APPROVER } from './mission-input.js';

/** How long a decision's proof stays valid: it is made the moment a person decides. */
export const DECISION_TTL_MS = 10 * 60_000;

/** What the gateway needs. */
export interface MissionGatewayDeps {
  client: Client;
  taskQueue: string;
  /**
   * Signs what this gateway vouches for: definitions of missions its (authenticated) users create,
   * and decisions of approvers its channels authenticated (DESIGN.md D5).
   */
  attestor: Attestor;
  /** The mission's capability set (normally the agent's). */
  capabilities: string[];
  /** Upsert the dashboard search attributes (true on a server that has them). */
  dashboard?: boolean;
  /** Missions' open waits and the channels' state: inbound events for `waitFor` steps; none: channels offer none. */
  events?: Pick<MissionEventDeps, 'waits' | 'store'>;
  /**
   * The audit log: a decision the mission refused before the worker saw it (an approver it does not
   * accept, a closed gate) is recorded as `GateDecisionRejected` here, where the approver was authenticated.
   */
  audit?: AuditPort;
}

const MISSION_ID = /^mission-[A-Za-z0-9-]{1,80}$/;
const STATE = /^[a-z]{1,20}$/;

/** The mission a gate id belongs to (`<missionId>/gate-<n>`). */
export function missionOfGate(gateId: string): string {
  const m = /^(.+)\/gate-\d+$/.exec(gateId);
  if (!m?.[1])
    throw new AivyxError('Config', `"${gateId}" is not a gate id`, {
      hint: 'gate ids look like mission-…/gate-1 (see `aivyx mission show`)',
    });
  return m[1];
}

function checkId(missionId: string): string {
  if (!MISSION_ID.test(missionId))
    throw new AivyxError('Config', `"${missionId}" is not a mission id`, {
      hint: 'mission ids look like mission-<uuid> (see `aivyx mission list`)',
    });
  return missionId;
}

/** "No such workflow" as `NotFound` naming the mission (or, for one that ended, a refusal saying so); anything else unchanged. */
function missionError(missionId: string, err: unknown): unknown {
  if (!isWorkflowNotFound(err)) return err;
  // Temporal answers NOT_FOUND for an update or signal to a workflow that has closed.
  if (/already completed/i.test(err instanceof Error ? err.message : '')) {
    return new AivyxError(
      'CapabilityDenied',
      `mission ${missionId} has ended (workflow execution already completed): nothing can be decided or cancelled`,
      { hint: 'see `aivyx mission show`', detail: { missionId, conflict: true }, cause: err },
    );
  }
  return new AivyxError('NotFound', `no mission ${missionId}`, { hint: 'see `aivyx mission list`', detail: { missionId }, cause: err });
}

/** Rethrows through {@link missionError}. */
function notFoundAs(missionId: string): (err: unknown) => never {
  return (err) => {
    throw missionError(missionId, err);
  };
}

/**
 * Missions over the Temporal client: the local channels' {@link LocalMissionPort}, and the chat channels'
 * {@link ChatMissionPort} (its records side says whose a mission is: channels/mission-records.ts).
 */
export class MissionGateway implements LocalMissionPort, ChatMissionPort {
  constructor(private readonly deps: MissionGatewayDeps) {}

  /** Builds the definition for a spec (validated) without starting it. */
  definition(input: MissionSpec): MissionDefinition {
    const spec = parseMissionSpec(input);
    const steps: DefinedStep[] = spec.plan
      ? [{ kind: 'plan' }]
      : (spec.steps && spec.steps.length > 0 ? spec.steps : [spec.goal]).map(defineStep);
    const approvers = parseApprovers(spec.approvers && spec.approvers.length > 0 ? spec.approvers : [LOCAL_APPROVER.identity]);
    const second = spec.secondApprovers && spec.secondApprovers.length > 0 ? parseApprovers(spec.secondApprovers) : undefined;
    const missionId = `mission-${randomUUID()}`;
    return {
      missionId,
      goal: spec.goal,
      steps,
      approvers,
      ...(second ? { secondApprovers: second } : {}),
      ...(spec.escalateAfter !== undefined ? { escalateAfter: spec.escalateAfter } : {}),
      ...(spec.reminderAfter !== undefined ? { reminderAfter: spec.reminderAfter } : {}),
      ...(spec.expireAfter !== undefined ? { expireAfter: spec.expireAfter } : {}),
      onExpire: spec.onExpire === 'skip-step' ? 'skip-step' : 'fail',
      ...(spec.budget ? { budget: spec.budget } : {}),
      capabilities: spec.capabilities ? this.narrowed(spec.capabilities, spec.steps ?? []) : this.deps.capabilities,
      channel: { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: missionId, sender: LOCAL_APPROVER.identity },
    };
  }

  /**
   * A spec's own capability set (canonical scopes, plus what its notices to other people need), refused
   * naming the first scope the assistant does not hold: a mission never holds more than the assistant.
   */
  private narrowed(asked: readonly string[], steps: readonly MissionStepSpec[]): string[] {
    const held = CapabilitySet.from(this.deps.capabilities);
    const scopes = [...asked, ...noticeCapabilities(steps)].map((c) => {
      let scope: string;
      try {
        scope = Scope.parse(c).toString();
      } catch (e) {
        throw new AivyxError('Config', `field "capabilities": "${c}" is not a scope: ${(e as Error).message}`, {
          hint: 'e.g. fs.read:/home/me/notes/**',
        });
      }
      if (!held.grants(scope))
        throw new AivyxError('Config', `field "capabilities": the assistant does not hold ${scope}, so no mission of it can`, {
          hint: `it holds ${this.deps.capabilities.join(', ') || 'nothing'} (AIVYX_CAPABILITIES)`,
        });
      return scope;
    });
    return [...new Set(scopes)];
  }

  /** Starts a mission; resolves with its id. A spec with a `schedule` is for {@link schedule}. */
  async create(spec: MissionSpec): Promise<{ missionId: string }> {
    if (spec.schedule) throw new AivyxError('Config', 'a recurring mission is created with schedule(), not create()');
    const def = this.definition(spec);
    await startMission(this.deps, def, 'ALLOW_DUPLICATE');
    return { missionId: def.missionId };
  }

  /** Creates a recurring mission (the spec's `schedule`); resolves with its schedule id. */
  async schedule(spec: MissionSpec): Promise<{ scheduleId: string }> {
    const parsed = parseMissionSpec(spec);
    if (!parsed.schedule) throw new AivyxError('Config', 'a recurring mission needs a "schedule"', { hint: 'e.g. {"every": "7d"}' });
    return { scheduleId: await createMissionSchedule(this.deps, this.definition(parsed), parsed.schedule, LOCAL_APPROVER.identity) };
  }

  /** The recurring missions (schedules of `scheduledMissionWorkflow`): paused or not, their next runs and their last one. Visibility: a new one is listed within seconds. */
  async schedules(limit = 100): Promise<ScheduleRow[]> {
    const out: ScheduleRow[] = [];
    for await (const s of this.deps.client.schedule.list({ pageSize: Math.min(limit, 100) })) {
      const a = s.action;
      if (!a || a.type !== 'startWorkflow' || a.workflowType !== 'scheduledMissionWorkflow' || !MISSION_ID.test(s.scheduleId)) continue;
      const last = s.info.recentActions.at(-1);
      out.push({
        scheduleId: s.scheduleId,
        paused: s.state.paused,
        next: s.info.nextActionTimes.slice(0, 3).map((d) => d.toISOString()),
        ...(last ? { lastRun: { at: last.takenAt.toISOString(), workflowId: last.action.workflow.workflowId } } : {}),
      });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Pauses, resumes or deletes a recurring mission's schedule (its runs so far are untouched). */
  async scheduleAction(scheduleId: string, action: 'pause' | 'resume' | 'delete'): Promise<{ scheduleId: string; state: string }> {
    const handle = this.deps.client.schedule.getHandle(checkId(scheduleId));
    if (action === 'pause') await handle.pause('paused by the owner');
    else if (action === 'resume') await handle.unpause('resumed by the owner');
    else await handle.delete();
    return { scheduleId, state: action === 'pause' ? 'paused' : action === 'resume' ? 'active' : 'deleted' };
  }

  /** Missions by visibility (dashboard attributes), newest first; `state` filters on AivyxMissionState. */
  async list(state?: string, limit = 100): Promise<MissionSummary[]> {
    if (state !== undefined && !STATE.test(state))
      throw new AivyxError('Config', `"${state}" is not a mission state`, {
        hint: 'states: running, waiting, completed, failed, cancelled, expired',
      });
    const query = `WorkflowType = 'missionWorkflow'${state ? ` AND AivyxMissionState = '${state}'` : ''}`;
    const out: MissionSummary[] = [];
    for await (const wf of this.deps.client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
      out.push({
        missionId: wf.workflowId,
        status: wf.status.name,
        state: wf.typedSearchAttributes.get(AivyxMissionState),
        openGate: wf.typedSearchAttributes.get(AivyxOpenGate),
        startTime: wf.startTime.toISOString(),
      });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Missions newest first whose (verified) owners `where` accepts. */
  records(opts: { state?: string; limit: number; where: (owners: MissionOwners) => boolean }): Promise<MissionRecord[]> {
    if (opts.state !== undefined && !STATE.test(opts.state)) throw new AivyxError('Config', `"${opts.state}" is not a mission state`);
    return missionRecords(this.deps, opts);
  }

  /** Recurring missions whose (verified) owners `where` accepts. */
  scheduleRecords(opts: { limit: number; where: (owners: MissionOwners) => boolean }): Promise<ScheduleRecord[]> {
    return scheduleRecords(this.deps, opts);
  }

  /** One recurring mission with its (verified) owners, or undefined. */
  scheduleRecord(scheduleId: string): Promise<ScheduleRecord | undefined> {
    return scheduleRecord(this.deps, checkId(scheduleId));
  }

  /** One mission with its (verified) owners, or undefined. */
  record(missionId: string): Promise<MissionRecord | undefined> {
    return missionRecord(this.deps, checkId(missionId));
  }

  /**
   * The status query of one mission (works on a closed mission too, while its history is kept), with
   * `steps`, how many steps its (verified) definition has, so a client can say "step 2 of 2" as the UI does.
   */
  async show(missionId: string): Promise<MissionView> {
    const handle = this.deps.client.workflow.getHandle<typeof missionWorkflow>(checkId(missionId));
    const desc = await handle.describe().catch(notFoundAs(missionId));
    const [status, def] = await Promise.all([handle.query(missionStatusQuery), verifiedDefinition(this.deps, missionId, desc.runId)]);
    return {
      ...status,
      status: desc.status.name,
      ...(def ? { steps: def.steps.length } : {}),
      ...(desc.status.name === 'COMPLETED' ? { result: await handle.result() } : {}),
    };
  }

  /** Approves a gate as the local user. */
  approve(gateId: string, reason?: string, missionId?: string): Promise<GateDecisionResult> {
    return this.decide('approve', gateId, reason, missionId);
  }

  /** Denies a gate as the local user. */
  deny(gateId: string, reason?: string, missionId?: string): Promise<GateDecisionResult> {
    return this.decide('deny', gateId, reason, missionId);
  }

  /**
   * Decides a gate as `approver` — an identity a channel adapter verified (Telegram user id,
   * DKIM/SPF-verified address) with the tier it resolved. The Update validator decides whether
   * that approver may; a refusal is a CapabilityDenied error saying why.
   */
  decideAs(kind: 'approve' | 'deny', gateId: string, approver: GateApprover, reason?: string): Promise<GateDecisionResult> {
    return this.decide(kind, gateId, reason, undefined, approver);
  }

  /** Offers an inbound message, as its channel authenticated it, to missions waiting for one; returns the missions that took it. */
  offerEvent(event: InboundEvent): Promise<string[]> {
    const events = this.deps.events;
    if (!events) return Promise.resolve([]);
    return offerMissionEvent({ client: this.deps.client, attestor: this.deps.attestor, ...events }, event);
  }

  /** Cancels a mission: an open gate is withdrawn. */
  async cancel(missionId: string, reason?: string): Promise<void> {
    await this.deps.client.workflow
      .getHandle(checkId(missionId))
      .signal(cancelMissionSignal, reason ? { reason } : {})
      .catch(notFoundAs(missionId));
  }

  /**
   * Records a decision a channel refused before sending it (a token sent to someone else, an
   * "approve" without one) as `GateDecisionRejected`, once per `eventId` (the platform's id of the
   * press or mail). Best effort: the refusal stands either way.
   */
  async rejectDecision(r: {
    gateId: string;
    kind: 'approve' | 'deny';
    approver: GateApproverRef;
    reason: string;
    eventId: string;
  }): Promise<void> {
    await this.auditRejected(`gateway/${r.gateId}/${r.approver.channel}/${r.eventId}/rejected`, r.kind, r.gateId, r.approver, r.reason);
  }

  /** Records a decision the mission's validator refused (the worker audits those it checked itself: "approval refused: …"). */
  private async auditRefusal(kind: 'approve' | 'deny', req: GateDecisionRequest, why: string): Promise<void> {
    if (/^(approval|denial) refused: /.test(why)) return;
    await this.auditRejected(`gateway/${req.gateId}/${req.nonce}/rejected`, kind, req.gateId, req.approver, why);
  }

  private async auditRejected(key: string, kind: 'approve' | 'deny', gateId: string, who: GateApproverRef, why: string): Promise<void> {
    if (!this.deps.audit) return;
    const missionId = missionOfGate(gateId);
    await this.deps.audit
      .append(key, {
        type: 'GateDecisionRejected',
        turnId: missionId,
        missionId,
        gateId,
        decision: kind,
        claimedApprover: who.identity,
        claimedChannel: who.channel,
        reason: why.slice(0, 500),
      })
      .catch(() => undefined);
  }

  private async decide(
    kind: 'approve' | 'deny',
    gateId: string,
    reason?: string,
    missionId?: string,
    approver: GateApprover = LOCAL_APPROVER,
  ): Promise<GateDecisionResult> {
    const owner = missionOfGate(gateId);
    if (missionId !== undefined && missionId !== owner)
      throw new AivyxError('Config', `gate ${gateId} does not belong to mission ${missionId}`);
    const handle = this.deps.client.workflow.getHandle<typeof missionWorkflow>(checkId(owner));
    // The approver was authenticated by whoever called this (the REST token, a Telegram update, a verified mail): vouch for it.
    const request = signedDecision(this.deps.attestor, kind, gateId, approver, reason);
    try {
      return await handle.executeUpdate(kind === 'approve' ? approveGateUpdate : denyGateUpdate, { args: [request] });
    } catch (err) {
      if (isWorkflowNotFound(err) || isTemporalUnreachable(err)) throw missionError(owner, err);
      const e = err as { message?: string; cause?: { message?: string } };
      const why = e.cause?.message ?? e.message ?? String(err);
      await this.auditRefusal(kind, request, why);
      // The update validator's refusals (workflows/mission/handlers.ts): no such gate, a gate already decided, an approver it does not accept.
      if (/ has no gate /.test(why))
        throw new AivyxError('NotFound', `${kind} refused: ${why}`, {
          hint: 'see `aivyx mission show <mission>` for its open gate',
          detail: { gateId },
        });
      if (/ is closed /.test(why))
        throw new AivyxError('CapabilityDenied', `${kind} refused: ${why}`, { detail: { gateId, conflict: true } });
      throw new AivyxError('CapabilityDenied', `${kind} refused: ${why}`, { detail: { gateId } });
    }
  }
}

/** What starting a mission needs: a client, the task queue, a key to vouch for the definition. */
export interface MissionStarter {
  client: Client;
  taskQueue: string;
  attestor: Pick<Attestor, 'seal'>;
  dashboard?: boolean;
}

/**
 * A recurring mission: a Schedule (id = the template's mission id) whose action starts
 * `scheduledMissionWorkflow` with the template and `deps.attestor`'s proof over it (bound to the
 * schedule id). Each run becomes a mission of its own, attested by the worker only for a run the
 * Schedule itself started. An existing schedule of that id is left as it is (a retried create).
 */
export async function createMissionSchedule(
  deps: MissionStarter,
  template: MissionDefinition,
  s: MissionScheduleSpec,
  createdBy: string,
): Promise<string> {
  const scheduleId = template.missionId;
  const args: ScheduledMissionArgs = {
    template,
    proof: deps.attestor.seal('mission-schedule', scheduleId, template),
    ...(deps.dashboard ? { dashboard: true } : {}),
  };
  try {
    await deps.client.schedule.create({
      scheduleId,
      spec: {
        ...(s.every !== undefined ? { intervals: [{ every: durationMs(s.every) }] } : { cronExpressions: [s.cron!] }),
        ...(s.timeZone ? { timezone: s.timeZone } : {}),
      },
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledMissionWorkflow',
        workflowId: scheduleId,
        taskQueue: deps.taskQueue,
        args: [args],
        staticSummary: `Recurring mission: ${template.goal}`.slice(0, 200),
      },
      policies: {
        overlap: s.overlap === 'allow-all' ? 'ALLOW_ALL' : s.overlap === 'buffer-one' ? 'BUFFER_ONE' : 'SKIP',
        catchupWindow: durationMs(s.catchupWindow ?? '1m'),
      },
      state: { paused: s.paused ?? false, note: `created by ${createdBy}` },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
  }
  return scheduleId;
}

/** The arguments of `missionWorkflow` for `def`, vouched for by `attestor` (the proof is bound to the mission id). */
export function signedMissionArgs(
  attestor: Pick<Attestor, 'seal'>,
  def: MissionDefinition,
  extra: Omit<MissionArgs, 'definition' | 'proof'> = {},
): MissionArgs {
  return { definition: def, proof: attestor.seal('mission', def.missionId, def), ...extra };
}

/**
 * A decision on `gateId` by `approver`, vouched for by `attestor`: call this only for an approver
 * you authenticated. The proof binds the mission, gate, decision, approver, reason and a nonce, and
 * expires after `DECISION_TTL_MS`.
 */
export function signedDecision(
  attestor: Pick<Attestor, 'seal'>,
  kind: 'approve' | 'deny',
  gateId: string,
  approver: GateApprover,
  reason?: string,
): GateDecisionRequest {
  const missionId = missionOfGate(gateId);
  const request = { gateId, approver, ...(reason ? { reason } : {}), nonce: randomBytes(16).toString('hex') };
  return {
    ...request,
    proof: attestor.seal('gate-decision', missionId, gateDecisionBody(missionId, kind, request), { ttlMs: DECISION_TTL_MS }),
  };
}

/** Starts `def` with its proof; `REJECT_DUPLICATE` makes a retried start a no-op for callers that need it. */
export async function startMission(
  deps: MissionStarter,
  def: MissionDefinition,
  reuse: 'ALLOW_DUPLICATE' | 'REJECT_DUPLICATE',
): Promise<void> {
  await deps.client.workflow.start<typeof missionWorkflow>('missionWorkflow', {
    workflowId: def.missionId,
    taskQueue: deps.taskQueue,
    workflowIdReusePolicy: reuse,
    args: [signedMissionArgs(deps.attestor, def, deps.dashboard ? { dashboard: true } : {})],
    ...missionStartMetadata(def),
  });
}
