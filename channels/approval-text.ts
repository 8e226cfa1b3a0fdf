/**
 * The lines of an approval request every chat channel shows (opened, reminder, escalated): the call
 * as it will run (canonical input, secrets redacted), why, who asked where, and the digest tying it
 * to the audit log. Each channel adds its own way to answer.
 */
import type { MissionNotice } from '../activities/mission-activities.js';
import { inputDigest } from '../core/tools/describe-call.js';

const HEADLINE: Partial<Record<MissionNotice['kind'], string>> = {
  opened: 'Approval needed',
  reminder: 'Reminder: approval still needed',
  escalated: 'Escalated to you: approval needed',
};

/** The request's lines, before the channel's own line saying how to answer. */
export function approvalRequestLines(n: MissionNotice): string[] {
  return [
    `${HEADLINE[n.kind] ?? 'Approval needed'} — mission ${n.missionId}`,
    `What: ${n.goal ?? '(no goal given)'}`,
    `Why: ${n.why ?? n.text}`,
    `Asked by: ${n.askedBy ? `${n.askedBy.identity} on ${n.askedBy.channel}` : '?'}`,
    `Tool: ${n.tool ?? '?'}`,
    ...(n.call ?? []).map((line) => `  ${line}`),
    `Input digest: ${inputDigest(n.inputHash)}`,
    `Deadline: ${n.deadline !== undefined ? new Date(n.deadline).toISOString() : 'none'}`,
    `Gate: ${n.gateId}`,
  ];
}
