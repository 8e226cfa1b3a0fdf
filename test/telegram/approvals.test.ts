/** Pure parts of Telegram approvals: callback data, request and closing texts, the digest. */
import { describe, expect, it } from 'vitest';
import type { MissionNotice } from '../../activities/mission-activities.js';
import { approvalKeyboard, callbackData, closedText, inputDigest, parseCallbackData, requestText } from '../../channels/telegram/index.js';

const TOKEN = 'AbCdEfGhIjK.0123456789abcdef01234567';
const notice: MissionNotice = {
  missionId: 'mission-1',
  gateId: 'mission-1/gate-2',
  kind: 'opened',
  approvers: [{ identity: '4242', channel: 'telegram' }],
  text: 'shell.exec needs approval: confirm first',
  goal: 'ship release 42',
  tool: 'shell.exec',
  inputHash: 'ab'.repeat(32),
  why: 'shell.exec is confirm-first',
  deadline: Date.UTC(2026, 11, 5, 15, 40, 1),
  call: ['argv: ./deploy.sh --prod'],
  askedBy: { identity: 'local-user', channel: 'cli' },
};

describe('Telegram approvals (pure)', () => {
  it('callback data is a:/d: + the token, within 64 bytes, and parses back; anything else does not parse', () => {
    expect(callbackData('approve', TOKEN)).toBe(`a:${TOKEN}`);
    expect(callbackData('deny', TOKEN)).toBe(`d:${TOKEN}`);
    expect(Buffer.byteLength(callbackData('approve', TOKEN))).toBeLessThanOrEqual(64);
    expect(parseCallbackData(`a:${TOKEN}`)).toEqual({ kind: 'approve', token: TOKEN });
    expect(parseCallbackData(`d:${TOKEN}`)).toEqual({ kind: 'deny', token: TOKEN });
    for (const bad of [undefined, '', 'approve:g-1', 'x:abc', 'a:', `a:${TOKEN} extra`]) expect(parseCallbackData(bad)).toBeUndefined();
    expect(approvalKeyboard(TOKEN)).toEqual({
      inline_keyboard: [
        [
          { text: 'Approve', callback_data: `a:${TOKEN}` },
          { text: 'Deny', callback_data: `d:${TOKEN}` },
        ],
      ],
    });
  });

  it('a request says what, why, who asked where, which tool called how, the input digest, the deadline in UTC and the gate id', () => {
    const text = requestText(notice);
    expect(text.split('\n').slice(0, 9)).toEqual([
      'Approval needed — mission mission-1',
      'What: ship release 42',
      'Why: shell.exec is confirm-first',
      'Asked by: local-user on cli',
      'Tool: shell.exec',
      '  argv: ./deploy.sh --prod',
      'Input digest: abababababab',
      'Deadline: 2026-12-05T15:40:01.000Z',
      'Gate: mission-1/gate-2',
    ]);
    expect(requestText({ ...notice, kind: 'reminder' })).toMatch(/^Reminder: approval still needed/);
    expect(requestText({ ...notice, kind: 'escalated' })).toMatch(/^Escalated to you/);
    expect(inputDigest(undefined)).toBe('?');
    // A request carries the buttons, so it must fit one message: the longest lines are cut until it does.
    const huge = requestText({ ...notice, goal: 'g'.repeat(6000), call: ['x'.repeat(1000), 'y'.repeat(1000)] });
    expect(huge.length).toBeLessThanOrEqual(4096);
    expect(huge).toContain('Gate: mission-1/gate-2');
    expect(huge).toMatch(/What: g+… \(cut\) …g+\n/);
    // A value an approval request quotes keeps its end, where a payload past its first characters would be.
    const why = `net.fetch: "url" is "https://x.example/${'a'.repeat(1990)}/collect?pin=4711", read from untrusted content`;
    const long = requestText({ ...notice, goal: 'g'.repeat(6000), why, call: ['x'.repeat(1000), 'y'.repeat(1000)] });
    expect(long.length).toBeLessThanOrEqual(4096);
    expect(long).toMatch(/Why: net\.fetch: "url" is "https:\/\/x\.example\/a+… \(cut\) …a+\/collect\?pin=4711", read from/);
    expect(closedText({ ...notice, kind: 'expired', text: 'the gate expired; the mission ends' })).toBe(
      'Gate mission-1/gate-2 (shell.exec, mission mission-1): the gate expired; the mission ends',
    );
  });
});
