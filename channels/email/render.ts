/** Plain-text bodies of the mails the email channel sends: turn replies and gate notices. */
import type { MissionNotice } from '../../activities/mission-activities.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { inputDigest } from '../../core/tools/describe-call.js';
import { outcomeReplyText } from '../outcome-text.js';

/** The reply text for a turn's outcome (an approval request mail, when one is needed, comes separately). */
export function emailOutcomeText(outcome: TurnOutcome, turnId: string): string {
  return outcomeReplyText(outcome, turnId);
}

export { inputDigest };

const HEADLINE: Record<MissionNotice['kind'], string> = {
  opened: 'Approval needed',
  reminder: 'Reminder: approval still needed',
  escalated: 'Escalated to you: approval needed',
  decided: 'Decided',
  expired: 'Expired without an answer',
  withdrawn: 'Withdrawn',
};

/** Whether a notice asks for a decision (and so carries a token). */
export function asksForDecision(kind: MissionNotice['kind']): boolean {
  return kind === 'opened' || kind === 'reminder' || kind === 'escalated';
}

/** The subject of a new gate thread; the token in it lets a reply find its gate. */
export function gateSubject(notice: MissionNotice, token: string): string {
  return `[aivyx approve ${token}] ${HEADLINE[notice.kind]}: ${notice.tool ?? 'a tool call'}`;
}

/** The body of a gate notice to `address`: the call as it will run (canonical input, secrets redacted), why, who asked where. */
export function gateBody(notice: MissionNotice, address: string): string {
  const [first, ...rest] = notice.call ?? [];
  const lines = [
    HEADLINE[notice.kind],
    '',
    `What:     ${notice.goal ?? '(no goal given)'}`,
    `Why:      ${notice.why ?? notice.text}`,
    `Asked by: ${notice.askedBy ? `${notice.askedBy.identity} on ${notice.askedBy.channel}` : '?'}`,
    `Tool:     ${notice.tool ?? '?'}`,
    ...(first !== undefined ? [`Call:     ${first}`, ...rest.map((l) => `          ${l}`)] : []),
    `Input:    ${inputDigest(notice.inputHash)} (first 12 hex digits of the input's SHA-256)`,
    `Deadline: ${notice.deadline !== undefined ? new Date(notice.deadline).toISOString() : '?'}`,
    `Gate:     ${notice.gateId}`,
    `Mission:  ${notice.missionId}`,
    '',
  ];
  if (asksForDecision(notice.kind)) {
    lines.push(
      'To decide, reply to this mail with one of these as the first line:',
      '  approve',
      '  deny <reason>',
      '',
      `Only a reply from ${address} that your mail provider signed (DKIM) or sent (SPF) counts, and only the first one.`,
    );
  } else {
    lines.push(notice.text, '', 'Nothing more to decide here.');
  }
  return lines.join('\n');
}
