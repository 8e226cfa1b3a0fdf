/**
 * Missions as records with their owners, read over the Temporal client for the mission control
 * port (activities/ports.ts). Who a mission belongs to comes from its definition — the start input
 * of its current run (a continued run carries the same definition and proof) — and only from a
 * definition whose `mission` proof this install's attestation key checks: anyone who reaches the
 * frontend can start a workflow named like a mission, and such a forgery names nobody here.
 * Visibility (the dashboard search attributes) only narrows which missions to read.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { ValueError } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type { MissionRecord } from '../activities/ports.js';
import { AivyxError } from '../core/errors.js';
import type { MissionOwners } from '../core/mission-owner.js';
import { AivyxMissionState, AivyxOpenGate } from '../core/search-attributes.js';
import type { Attestor } from '../infra/attestation.js';
import { isWorkflowNotFound } from '../infra/temporal/client-errors.js';
import { missionStatusQuery, type MissionArgs, type MissionDefinition } from '../workflows/mission-messages.js';

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
async function verifiedDefinition(deps: MissionRecordDeps, workflowId: string, runId: string): Promise<MissionDefinition | undefined> {
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
