/**
 * Short ids on the CLI: the start of a mission, schedule, gate or memory id names the one it starts
 * (core/short-id.ts), looked up among those the running `aivyx up` lists. An id nothing matches is
 * passed on as typed, so the server's own "no such …" answers.
 */
import type { MemoryEntry, RecallResult } from '../../activities/tools/memory-port.js';
import { AivyxError } from '../../core/errors.js';
import { MEMORY_MAX_LIMIT } from '../../core/tools/memory-fields.js';
import { resolvePrefix } from '../../core/short-id.js';
import type { MissionSummary, ScheduleRow } from '../ports.js';
import { restJson, type RestTarget } from './rest-client.js';

/**
 * What mission ids start with: `8926` is short for `mission-8926…`, and `2f82` for the confirmation
 * mission `mission-confirm-2f82…` (a chat's confirm-first call).
 */
export const MISSION_PREFIXES = ['mission-', 'mission-confirm-'] as const;
const GATE = /^(.*)\/gate-(\d+)$/;

/** The missions the REST channel lists (newest first, up to its page). */
function missions(target: RestTarget, state?: string): Promise<MissionSummary[]> {
  return restJson(target, 'GET', `/v1/missions${state ? `?state=${state}` : ''}`) as Promise<MissionSummary[]>;
}

/** The mission `input` names (a whole id or its start). */
export async function resolveMissionId(target: RestTarget, input: string): Promise<string> {
  if (/^mission-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(input)) return input;
  const ids = (await missions(target)).map((m) => m.missionId);
  return resolvePrefix(input, ids, 'mission', MISSION_PREFIXES) ?? input;
}

/** The recurring mission (schedule) `input` names. */
export async function resolveScheduleId(target: RestTarget, input: string): Promise<string> {
  const rows = (await restJson(target, 'GET', '/v1/schedules')) as ScheduleRow[];
  return (
    resolvePrefix(
      input,
      rows.map((r) => r.scheduleId),
      'recurring mission',
      MISSION_PREFIXES,
    ) ?? input
  );
}

/**
 * The gate `input` names: `<mission>/gate-<n>` with the mission's id or its start, or the start of an
 * open gate's id (its mission's id, so `8926` is the open gate of mission-8926…).
 */
export async function resolveGateId(target: RestTarget, input: string): Promise<string> {
  const m = GATE.exec(input);
  if (m) return `${await resolveMissionId(target, m[1]!)}/gate-${m[2]!}`;
  const open = (await missions(target, 'waiting')).flatMap((s) => (s.openGate ? [s.openGate] : []));
  const gate = resolvePrefix(input, open, 'open gate', MISSION_PREFIXES);
  if (!gate)
    throw new AivyxError('NotFound', `no open gate starts with "${input}"`, {
      hint: 'see `aivyx approvals` for the gates waiting for you (a gate id looks like mission-…/gate-1)',
    });
  return gate;
}

/** The memory entry `input` names, looked up among the newest entries the owner may list (memory.recall's most). */
export async function resolveMemoryId(target: RestTarget, input: string): Promise<string> {
  const listed = (await restJson(target, 'GET', `/v1/memory?limit=${MEMORY_MAX_LIMIT}`)) as RecallResult;
  return (
    resolvePrefix(
      input,
      listed.entries.map((e: MemoryEntry) => e.id),
      'memory entry',
      ['m_'],
    ) ?? input
  );
}

/** What a turn id starts with on the CLI channel: `849b32b3` is short for `turn/cli/849b32b3…`. */
const CLI_TURN = 'turn/cli/';
const WHOLE_TURN =
  /^(turn\/[^\s/]+\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mission-confirm-[0-9a-f]{32}\/step-\d+\/run-\d+)$/;

/** The turn `input` names: a whole turn id, or the start of one (of a CLI turn's id after `turn/cli/`). */
export async function resolveTurnId(target: RestTarget, input: string): Promise<string> {
  if (WHOLE_TURN.test(input)) return input;
  const start = input.startsWith('turn/') ? input : `${CLI_TURN}${input}`;
  if (start.length < 'turn/cli/'.length + 4) return input;
  const { turns } = (await restJson(target, 'GET', `/v1/turns?startsWith=${encodeURIComponent(start)}`)) as { turns: string[] };
  return resolvePrefix(input, turns, 'turn', [CLI_TURN]) ?? input;
}
