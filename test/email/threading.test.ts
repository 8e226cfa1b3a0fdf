/** Threads, ids, quote stripping, approval replies and reply bodies for the email channel. */
import { describe, expect, it } from 'vitest';
import {
  bareMessageId,
  emailMessageId,
  emailOutcomeText,
  emailSessionId,
  gateBody,
  gateSubject,
  outboundMessageId,
  parseDecision,
  referenceList,
  replySubject,
  stripQuotedText,
  threadRoot,
} from '../../channels/email/index.js';
import { GateTokens } from '../../infra/gate-tokens.js';

describe('email threading', () => {
  it('a thread root is the first References id, else In-Reply-To, else the message itself', () => {
    expect(threadRoot('c@x', '<b@x>', ['a@x', 'b@x'])).toBe('a@x');
    expect(threadRoot('c@x', '<b@x>', [])).toBe('b@x');
    expect(threadRoot('c@x', undefined, [])).toBe('c@x');
    expect(referenceList('<a@x> <b@x>')).toEqual(['a@x', 'b@x']);
    expect(referenceList(['<a@x>', '<b@x>'])).toEqual(['a@x', 'b@x']);
    expect(bareMessageId('  <a@x> ')).toBe('a@x');
    expect(bareMessageId('<>')).toBeUndefined();
  });

  it('ids are safe hashes: stable per Message-ID, sessions bound to sender and tier', () => {
    expect(emailMessageId('a@x')).toBe(emailMessageId('a@x'));
    expect(emailMessageId('a@x')).toMatch(/^m-[0-9a-f]{32}$/);
    expect(emailMessageId('a@x')).not.toBe(emailMessageId('b@x'));
    const s = emailSessionId('root@x', 'alice@example.com', 'SemiTrusted');
    expect(s).toMatch(/^thread-[0-9a-f]{24}-[0-9a-f]{8}$/);
    expect(emailSessionId('root@x', 'mallory@example.com', 'SemiTrusted')).not.toBe(s);
    expect(emailSessionId('root@x', 'alice@example.com', 'Untrusted')).not.toBe(s);
    expect(outboundMessageId('wf/run/4', 'aivyx.test')).toBe(outboundMessageId('wf/run/4', 'aivyx.test'));
    expect(replySubject('Plans')).toBe('Re: Plans');
    expect(replySubject('RE: Plans')).toBe('RE: Plans');
    expect(replySubject('')).toBe('Re: your message');
  });

  it('strips quoted text, attribution lines, Outlook separators and signatures', () => {
    expect(stripQuotedText('and tomorrow?\r\n\r\nOn Wed, Dec 2, 2026 aivyx wrote:\r\n> hello\r\n')).toBe('and tomorrow?');
    expect(stripQuotedText('Please summarise.\nThanks\n\n-- \nAlice Example\nCEO\n')).toBe('Please summarise.\nThanks');
    expect(stripQuotedText('> old\n\nnew answer\n\n> older\n')).toBe('new answer');
    expect(stripQuotedText('deny too risky\n\n-----Original Message-----\nFrom: aivyx\n\nApproval needed')).toBe('deny too risky');
  });

  it('reads approve / deny [reason] from the first non-empty line only', () => {
    expect(parseDecision('\n\n  Approve\n')).toEqual({ kind: 'approve' });
    expect(parseDecision('approve.\n\nOn Wed aivyx wrote:\n> deny')).toEqual({ kind: 'approve' });
    expect(parseDecision('deny too risky on a Friday')).toEqual({ kind: 'deny', reason: 'too risky on a Friday' });
    expect(parseDecision('Deny')).toEqual({ kind: 'deny' });
    expect(parseDecision('deny: not now')).toEqual({ kind: 'deny', reason: 'not now' });
    expect(parseDecision('I approve of this in principle')).toMatchObject({ kind: 'unclear' });
    expect(parseDecision('approved but only if')).toMatchObject({ kind: 'unclear' });
    expect(parseDecision('denying is tempting')).toMatchObject({ kind: 'unclear' });
    expect(parseDecision('')).toEqual({ kind: 'unclear', line: '' });
  });

  it('renders replies and gate requests (what, why, tool, digest, deadline in UTC, gate id, token)', () => {
    expect(emailOutcomeText({ status: 'Completed', finalMessage: 'done', toolCallsMade: 0, durationMs: 1 } as never, 'turn/email/t')).toBe(
      'done',
    );
    expect(emailOutcomeText({ status: 'Failed', error: { kind: 'Llm', message: 'down' }, toolCallsMade: 0 }, 'turn/email/t')).toMatch(
      /failed \(Llm\): down/,
    );
    const notice = {
      missionId: 'mission-1',
      gateId: 'mission-1/gate-1',
      kind: 'opened' as const,
      approvers: [],
      text: 't',
      goal: 'ship it',
      tool: 'shell.exec',
      inputHash: 'abcdef0123456789ff',
      why: 'confirm first',
      deadline: Date.UTC(2026, 11, 5, 12, 0, 0),
    };
    const token = 'AbCdEfGhIjK.0123456789abcdef01234567';
    expect(GateTokens.find(gateSubject(notice, token))).toBe(token);
    const body = gateBody(notice, 'alice@example.com');
    for (const line of [
      'What:     ship it',
      'Why:      confirm first',
      'Tool:     shell.exec',
      'Input:    abcdef012345 ',
      'Deadline: 2026-12-05T12:00:00.000Z',
      'Gate:     mission-1/gate-1',
      '  approve',
      '  deny <reason>',
    ])
      expect(body).toContain(line);
    expect(gateBody({ ...notice, kind: 'expired', text: 'the gate expired' }, 'a@b.c')).toContain('Nothing more to decide here.');
  });
});
