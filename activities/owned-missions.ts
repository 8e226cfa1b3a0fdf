/**
 * A person's own missions, over the mission control port: what `mission.list`/`mission.cancel`,
 * Telegram `/missions` and the e-mail `missions` command all do, so the ownership rule
 * (core/mission-owner.ts) is applied in one place. A mission that is not the asker's is answered
 * exactly like one that does not exist, so nobody learns another person's mission ids.
 */
import { AivyxError } from '../core/errors.js';
import { ownsMission, type MissionAsker } from '../core/mission-owner.js';
import type { MissionControlPort, MissionRecord, ScheduleControlPort, ScheduleRecord } from './ports.js';

/** One of the asker's missions, as it is shown back to them (who else owns it is not). */
export type OwnMission = Omit<MissionRecord, 'owners'>;

/** What a cancel did. */
export interface CancelOutcome {
  missionId: string;
  /** `cancelled`: the cancel was sent now; `already-cancelled`: it had been (a retried call). */
  result: 'cancelled' | 'already-cancelled';
}

const view = ({ owners: _owners, ...rest }: MissionRecord): OwnMission => rest;

/** The asker's missions, newest first. */
export async function listOwnMissions(
  port: MissionControlPort,
  asker: MissionAsker,
  opts: { state?: string; limit: number },
): Promise<OwnMission[]> {
  const rows = await port.records({ ...opts, where: (owners) => ownsMission(owners, asker) });
  // The port filters; checking again costs nothing and keeps a port bug from leaking someone's mission.
  return rows.filter((r) => ownsMission(r.owners, asker)).map(view);
}

/** One of the asker's missions; NotFound for a mission that is not theirs (answered like one that does not exist). */
export async function showOwnMission(port: MissionControlPort, asker: MissionAsker, missionId: string): Promise<OwnMission> {
  const record = await port.record(missionId);
  if (!record || !ownsMission(record.owners, asker))
    throw new AivyxError('NotFound', `no mission ${missionId} of yours`, {
      hint: 'list your missions to see their ids',
      detail: { missionId },
    });
  return view(record);
}

/** Cancels one of the asker's missions; NotFound for a mission that is not theirs, CapabilityDenied for one that has ended. */
export async function cancelOwnMission(
  port: MissionControlPort,
  asker: MissionAsker,
  missionId: string,
  reason?: string,
): Promise<CancelOutcome> {
  const record = await showOwnMission(port, asker, missionId);
  if (record.status !== 'RUNNING') {
    if (record.state === 'cancelled' || record.status === 'CANCELLED') return { missionId, result: 'already-cancelled' };
    throw new AivyxError('CapabilityDenied', `mission ${missionId} has already ended (${record.state ?? record.status.toLowerCase()})`, {
      detail: { missionId, conflict: true },
    });
  }
  await port.cancel(missionId, reason);
  return { missionId, result: 'cancelled' };
}

/** One of the asker's recurring missions, as it is shown back to them. */
export type OwnSchedule = Omit<ScheduleRecord, 'owners'>;

/** The asker's recurring missions. */
export async function listOwnSchedules(port: ScheduleControlPort, asker: MissionAsker, limit: number): Promise<OwnSchedule[]> {
  const rows = await port.scheduleRecords({ limit, where: (owners) => ownsMission(owners, asker) });
  return rows.filter((r) => ownsMission(r.owners, asker)).map(({ owners: _owners, ...rest }) => rest);
}

/** Pauses or resumes one of the asker's recurring missions; NotFound for one that is not theirs. */
export async function setOwnSchedule(
  port: ScheduleControlPort,
  asker: MissionAsker,
  scheduleId: string,
  action: 'pause' | 'resume',
): Promise<{ scheduleId: string; paused: boolean }> {
  const record = await port.scheduleRecord(scheduleId);
  if (!record || !ownsMission(record.owners, asker))
    throw new AivyxError('NotFound', `no recurring mission ${scheduleId} of yours`, { detail: { scheduleId } });
  await port.scheduleAction(scheduleId, action);
  return { scheduleId, paused: action === 'pause' };
}
