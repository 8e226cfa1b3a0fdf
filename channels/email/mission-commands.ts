/**
 * Mission commands by mail: a verified sender (SemiTrusted: allowlisted and DKIM/SPF-aligned) whose
 * first line is `missions` gets their own missions (and recurring missions) listed; `show <id>` shows
 * one, `cancel <id>` cancels one of theirs, and `pause <id>` / `resume <id>` pause or resume one of
 * their recurring missions. Like an approval by mail, this is a person acting on missions that name them, not the
 * model: the sender is the verified From address, ownership is activities/owned-missions.ts's rule,
 * and another person's mission is answered like one that does not exist. Anything else (or any
 * unverified mail) is not a command and becomes a turn as before.
 */
import { cancelOwnMission, listOwnMissions, listOwnSchedules, setOwnSchedule, showOwnMission } from '../../activities/owned-missions.js';
import type { MissionControlPort, ScheduleControlPort } from '../../activities/ports.js';
import { AivyxError } from '../../core/errors.js';
import type { MissionAsker } from '../../core/mission-owner.js';
import { MISSION_ID_PATTERN } from '../../core/tools/mission-cancel.js';
import { stripQuotedText } from './threading.js';
import type { MailVerdict } from './trust.js';

/** How many missions the answer lists (newest first). */
export const MAILED_MISSIONS_SHOWN = 20;

type MissionCommand = { kind: 'list' } | { kind: 'cancel' | 'show' | 'pause' | 'resume'; missionId: string };

/** The command on the first non-empty line of the new (unquoted) text, if it is one. */
export function parseMissionCommand(text: string): MissionCommand | undefined {
  const first = stripQuotedText(text)
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  if (!first) return undefined;
  if (/^missions[.!]?$/i.test(first)) return { kind: 'list' };
  const one = /^(cancel|show|pause|resume)\s+(\S+)$/i.exec(first);
  if (one?.[1] && one[2] && MISSION_ID_PATTERN.test(one[2]))
    return { kind: one[1].toLowerCase() as 'cancel' | 'show' | 'pause' | 'resume', missionId: one[2] };
  return undefined;
}

/**
 * The answer to a mission command in `text` from `verdict`'s sender, or undefined when the mail is
 * not one (not verified, no port, or its first line is no command): then it is an ordinary message.
 */
export async function mailMissionCommand(
  control: (MissionControlPort & Partial<ScheduleControlPort>) | undefined,
  verdict: MailVerdict,
  text: string,
): Promise<string | undefined> {
  if (!control || verdict.tier !== 'SemiTrusted' || !verdict.from) return undefined;
  const command = parseMissionCommand(text);
  if (!command) return undefined;
  const asker: MissionAsker = { identity: verdict.from, channel: 'email', trustTier: verdict.tier, local: false };
  try {
    const line = (m: { missionId: string; state?: string; status: string; waiting?: string; goal: string }) =>
      `- ${m.missionId} — ${m.state ?? m.status.toLowerCase()}${m.waiting ? ` (waiting for ${m.waiting})` : ''}: ${m.goal.slice(0, 120)}`;
    const schedules = control.scheduleRecords ? (control as ScheduleControlPort) : undefined;
    if (command.kind === 'list') {
      const mine = await listOwnMissions(control, asker, { limit: MAILED_MISSIONS_SHOWN });
      const recurring = schedules ? await listOwnSchedules(schedules, asker, MAILED_MISSIONS_SHOWN) : [];
      if (mine.length === 0 && recurring.length === 0) return 'You have no missions.';
      return [
        ...(mine.length > 0 ? ['Your missions:', ...mine.map(line)] : []),
        ...(recurring.length > 0
          ? [
              'Your recurring missions:',
              ...recurring.map((r) => `- ${r.scheduleId} — ${r.paused ? 'paused' : `next run ${r.next ?? '?'}`}: ${r.goal.slice(0, 120)}`),
            ]
          : []),
        '',
        'Reply with "show <id>", "cancel <id>", or for a recurring mission "pause <id>" / "resume <id>", as the first line.',
      ].join('\n');
    }
    if (command.kind === 'show') return line(await showOwnMission(control, asker, command.missionId));
    if (command.kind === 'pause' || command.kind === 'resume') {
      if (!schedules) return 'Nothing changed: recurring missions cannot be paused by mail here.';
      const done = await setOwnSchedule(schedules, asker, command.missionId, command.kind);
      return `${done.paused ? 'Paused' : 'Resumed'} recurring mission ${done.scheduleId}.`;
    }
    const done = await cancelOwnMission(control, asker, command.missionId, `cancelled by mail from ${verdict.from}`);
    return done.result === 'cancelled' ? `Cancelled mission ${done.missionId}.` : `Mission ${done.missionId} was already cancelled.`;
  } catch (err) {
    if (err instanceof AivyxError && (err.kind === 'NotFound' || err.kind === 'CapabilityDenied'))
      return `Nothing changed: ${err.message}.`;
    throw err; // An outage: the mailbox reads the mail again later.
  }
}
