/**
 * Missions as records with their owners, read over the Temporal client for the mission control
 * port (activities/ports.ts). Who a mission belongs to comes from its definition — the start input
 * of its current run (a continued run carries the same definition and proof) — and only from a
 * definition whose `mission` proof this install's attestation key checks: anyone who reaches the
 * frontend can start a workflow named like a mission, and such a forgery names nobody here.
 * Visibility (the dashboard search attributes) only narrows which missions to read.
 */
import { ScheduleNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import { ValueError } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type { MissionRecord, ScheduleRecord } from '../activities/ports.js';
import { AivyxError } from '../core/errors.js';
import type { MissionOwners } from '../core/mission-owner.js';
import { AivyxMissionState, AivyxOpenGate } from '../core/search-attributes.js';
import type { Attestor } from '../infra/attestation.js';
import { isWorkflowNotFound } from '../infra/temporal/client-errors.js';
import { missionStatusQuery, type MissionArgs, type MissionDefinition, type ScheduledMissionArgs } from '../workflows/mission-messages.js';

/** What reading records needs. */
export interface MissionRecordDeps {
  client: Client;
  attestor: Pick<Attestor, 'check'>;
}

/** Most missions one listing reads (each costs a history read), however few of them are the asker's. */
export const MISSION_SCAN_LIMIT = 200;

/** What a listing or a describe tells about a run. */
type RunInfo = Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'type' | 'status' | 'startTime' | 'typedSearchAttributes'>;

/** The verified definition a run was started with, or undefined (not a mission, not ours, unreadable). */
export async function verifiedDefinition(
  deps: MissionRecordDeps,
  workflowId: string,
  runId: string,
): Promise<MissionDefinition | undefined> {
  const namespace = deps.client.options.namespace;
  try {
    // The first event only: a long mission's history is thousands of events.
    const page = await deps.client.workflowService.getWorkflowExecutionHistory({
      namespace,
      execution: { workflowId, runId },
      maximumPageSize: 1,
    });
    const payloads = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
    if (!payloads) return undefined;
    const args = await decodeFromPayloadsAtIndex<MissionArgs>(deps.client.options.loadedDataConverter, 0, payloads, {
      type: 'workflow',
      namespace,
      workflowId,
    });
    const def = args?.definition;
    if (!def || def.missionId !== workflowId) return undefined;
    return deps.attestor.check('mission', workflowId, def, args.proof).ok ? def : undefined;
  } catch (err) {
    // A payload this key cannot open (the codec's Crypto refusal), one that is not JSON, or a run that
    // is gone: not a mission of this install. An outage is not swallowed (it would list nothing).
    if (isWorkflowNotFound(err) || err instanceof AivyxError || err instanceof ValueError) return undefined;
    throw err;
  }
}

/** Who the definition names. */
export function ownersOf(def: MissionDefinition): MissionOwners {
  return {
    approvers: [...def.approvers, ...(def.secondApprovers ?? [])].map((a) => ({ identity: a.identity, channel: a.channel })),
    sender: { identity: def.channel.sender, channel: def.channel.name },
  };
}

/** What a running mission waits for: its open gate, or (asked of the worker) a wait step's timer. */
async function waitingFor(deps: MissionRecordDeps, info: RunInfo): Promise<string | undefined> {
  if (info.status.name !== 'RUNNING') return undefined;
  const gate = info.typedSearchAttributes.get(AivyxOpenGate);
  if (gate) return `approval of ${gate}`;
  if (info.typedSearchAttributes.get(AivyxMissionState) !== 'waiting') return undefined;
  try {
    return (await deps.client.workflow.getHandle(info.workflowId, info.runId).query(missionStatusQuery)).waiting;
  } catch {
    return undefined; // No worker to answer right now: the state says "waiting" anyway.
  }
}

async function recordOf(deps: MissionRecordDeps, info: RunInfo, def: MissionDefinition): Promise<MissionRecord> {
  const state = info.typedSearchAttributes.get(AivyxMissionState);
  const waiting = await waitingFor(deps, info);
  return {
    missionId: info.workflowId,
    goal: def.goal,
    status: info.status.name,
    ...(state ? { state } : {}),
    ...(waiting ? { waiting } : {}),
    startedAt: info.startTime.toISOString(),
    owners: ownersOf(def),
    ...(def.taintedBy && def.taintedBy.length > 0 ? { taintedBy: def.taintedBy } : {}),
  };
}

/** Missions newest first whose owners `where` accepts (see MissionControlPort.records). */
export async function missionRecords(
  deps: MissionRecordDeps,
  opts: { state?: string; limit: number; where: (owners: MissionOwners) => boolean },
): Promise<MissionRecord[]> {
  const query = `WorkflowType = 'missionWorkflow'${opts.state ? ` AND AivyxMissionState = '${opts.state}'` : ''}`;
  const out: MissionRecord[] = [];
  let scanned = 0;
  for await (const info of deps.client.workflow.list({ query, pageSize: 100 })) {
    if (++scanned > MISSION_SCAN_LIMIT || out.length >= opts.limit) break;
    const def = await verifiedDefinition(deps, info.workflowId, info.runId);
    if (def && opts.where(ownersOf(def))) out.push(await recordOf(deps, info, def));
  }
  return out;
}

/** One mission's record (its current run), or undefined. */
export async function missionRecord(deps: MissionRecordDeps, missionId: string): Promise<MissionRecord | undefined> {
  let info: RunInfo;
  try {
    info = await deps.client.workflow.getHandle(missionId).describe();
  } catch (err) {
    if (isWorkflowNotFound(err)) return undefined;
    throw err;
  }
  if (info.type !== 'missionWorkflow') return undefined;
  const def = await verifiedDefinition(deps, info.workflowId, info.runId);
  return def ? recordOf(deps, info, def) : undefined;
}

/** A recurring mission's record: its template, believed only under a `mission-schedule` proof this install's key checks. */
export async function scheduleRecord(deps: MissionRecordDeps, scheduleId: string): Promise<ScheduleRecord | undefined> {
  let desc;
  try {
    desc = await deps.client.schedule.getHandle(scheduleId).describe();
  } catch (err) {
    // No such schedule, or an action this key cannot open: nobody's here.
    if (err instanceof ScheduleNotFoundError || err instanceof AivyxError || err instanceof ValueError) return undefined;
    throw err;
  }
  const a = desc.action;
  if (a.type !== 'startWorkflow' || a.workflowType !== 'scheduledMissionWorkflow') return undefined;
  const args = a.args?.[0] as ScheduledMissionArgs | undefined;
  const template = args?.template;
  if (!template || template.missionId !== scheduleId) return undefined;
  if (!deps.attestor.check('mission-schedule', scheduleId, template, args.proof).ok) return undefined;
  const next = desc.info.nextActionTimes[0];
  return {
    scheduleId,
    goal: template.goal,
    paused: desc.state.paused,
    ...(next && !desc.state.paused ? { next: next.toISOString() } : {}),
    owners: ownersOf(template),
  };
}

/** Recurring missions whose owners `where` accepts (see ScheduleControlPort.scheduleRecords). */
export async function scheduleRecords(
  deps: MissionRecordDeps,
  opts: { limit: number; where: (owners: MissionOwners) => boolean },
): Promise<ScheduleRecord[]> {
  const out: ScheduleRecord[] = [];
  let scanned = 0;
  for await (const s of deps.client.schedule.list({ pageSize: 100 })) {
    if (++scanned > MISSION_SCAN_LIMIT || out.length >= opts.limit) break;
    if (s.action?.type !== 'startWorkflow' || s.action.workflowType !== 'scheduledMissionWorkflow') continue;
    const record = await scheduleRecord(deps, s.scheduleId);
    if (record && opts.where(record.owners)) out.push(record);
  }
  return out;
}
