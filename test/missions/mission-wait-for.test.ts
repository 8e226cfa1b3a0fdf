/**
 * `waitFor` an e-mail on the time-skipping server with real Dovecot (issue 12): "if Bob hasn't
 * answered this thread in 5 days, draft a nudge". Bob's DKIM-verified reply in the thread ends the
 * wait and the mission (the nudge never runs, the mail starts no turn); with no reply the timeout
 * branch runs the nudge. The attacker: an unsigned "Bob", someone else in the thread, Bob outside
 * the thread, and an event Update forged at the frontend — none ends the wait, and the forgery is audited.
 */
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailMessageId } from '../../channels/email/index.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { createAttestor } from '../../infra/attestation.js';
import { missionEventUpdate, missionStatusQuery, missionWaitKey, type MissionResult } from '../../workflows/mission-messages.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import { dovecotAvailable } from '../support/mail-servers.js';
import { dkimKey, startMailHarness, type MailHarness } from '../support/mail-harness.js';
import { timeSkippingEnv, updateRefusal } from '../support/temporal.js';

const BOB = 'bob@example.com';
const MALLORY = 'mallory@example.com';
const THREAD = 'thread-passport.1@aivyx.test';

let env: TestWorkflowEnvironment;
let h: MailHarness;

// Skipped where Dovecot is not installed, except in CI, which must have it (apt-get install dovecot-imapd).
const describeMail = dovecotAvailable() || process.env.CI ? describe : describe.skip;

beforeAll(async () => {
  if (!dovecotAvailable() && !process.env.CI) return;
  env = await timeSkippingEnv();
  h = await startMailHarness({
    script: { rules: [{ steps: [{ say: 'nudge drafted' }] }] },
    // Bob is not allowlisted: a wait needs his address authenticated, not trusted.
    allowlist: ['alice@example.com'],
    server: env,
  });
  h.keys.set('example.com', dkimKey('example.com', h.dns));
  h.dns.set('example.com TXT', [['v=spf1 ip4:192.0.2.10 -all']]);
  h.dns.set('_dmarc.example.com TXT', [['v=DMARC1; p=reject']]);
  await h.startChannel();
}, 120_000);

afterAll(async () => {
  await h?.stop();
  await env?.teardown();
});

/** "If Bob hasn't answered the thread within 5 days, draft a nudge." */
const nudgeIfSilent = () =>
  h.missions.create({
    goal: 'nudge Bob about the passport',
    steps: [
      { waitFor: { email: { from: 'Bob@Example.com', thread: `<${THREAD}>` } }, within: '5d', onEvent: 'end', onTimeout: 'continue' },
      'draft a nudge to Bob',
    ],
  });

async function waiting(missionId: string): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const s = await h.client.workflow.getHandle(missionId).query(missionStatusQuery);
    if (s.state === 'waiting' && s.waiting) return s.waiting;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${missionId} never waited`);
}

const turnOf = (mid: string) => turnWorkflowId('email', emailMessageId(mid));
/** Waits until the channel has handled `mid` as a turn (the wait did not take it). */
async function becameTurn(mid: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if ((await h.audit(turnOf(mid))).some((e) => e.type === 'TurnStarted')) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${mid} never became a turn`);
}
const of = <T extends AuditEvent['type']>(evs: AuditEvent[], type: T) =>
  evs.filter((e): e is Extract<AuditEvent, { type: T }> => e.type === type);
let n = 0;
const mid = (tag: string) => `${tag}.${Date.now()}.${++n}@example.com`;

describeMail('waitFor an e-mail (time-skipping, Dovecot)', () => {
  it('Bob answers in the thread: the wait ends on his verified reply, the mission ends, the nudge never runs; forgeries change nothing', async () => {
    const { missionId } = await nudgeIfSilent();
    expect(await waiting(missionId)).toMatch(
      new RegExp(`^an e-mail from bob@example\\.com in thread <${THREAD.replace(/\./g, '\\.')}>, until `),
    );

    // Not Bob's verified reply in the thread: each is handled as an ordinary mail (a turn), and the wait goes on.
    const unsigned = mid('unsigned');
    await h.sendAs({ from: BOB, subject: 'Re: passport', text: 'done!', messageId: unsigned, inReplyTo: THREAD, sign: false });
    const someoneElse = mid('mallory');
    await h.sendAs({ from: MALLORY, subject: 'Re: passport', text: 'done!', messageId: someoneElse, inReplyTo: THREAD });
    const elsewhere = mid('elsewhere');
    await h.sendAs({ from: BOB, subject: 'lunch?', text: 'lunch?', messageId: elsewhere });
    for (const m of [unsigned, someoneElse, elsewhere]) await becameTurn(m);
    expect((await h.client.workflow.getHandle(missionId).query(missionStatusQuery)).state).toBe('waiting');

    // Bob's DKIM-signed reply, quoting the thread in References only.
    const reply = mid('bob');
    await h.sendAs({
      from: BOB,
      subject: 'Re: passport',
      text: 'sent it yesterday',
      messageId: reply,
      references: ['other@x.test', THREAD],
    });
    const result = await h.client.workflow.getHandle(missionId).result();
    expect(result).toMatchObject<Partial<MissionResult>>({ state: 'completed', stepsRun: 1 });

    const audit = await h.audit(missionId);
    expect(of(audit, 'MissionEventReceived')).toEqual([
      expect.objectContaining({ waitKey: missionWaitKey(missionId, 0), source: 'email', from: BOB, eventId: emailMessageId(reply) }),
    ]);
    expect(of(audit, 'MissionStepFinished').map((e) => [e.step, e.outcome])).toEqual([[0, 'EventArrived']]);
    expect(of(audit, 'MissionEnded')).toEqual([expect.objectContaining({ state: 'completed' })]);
    // Bob's reply was the mission's: no turn ran for it, and the nudge step never ran.
    expect(await h.audit(turnOf(reply))).toEqual([]);
    expect(await h.audit(`${missionId}/step-1/run-1`)).toEqual([]);
  });

  it('nobody answers: after 5 (skipped) days the timeout branch drafts the nudge; a forged event on the way is refused and audited', async () => {
    const { missionId } = await nudgeIfSilent();
    await waiting(missionId);

    // At the frontend, the attacker sends the event with a proof of its own making (another key).
    const forger = createAttestor(new Uint8Array(32).fill(7));
    const waitKey = missionWaitKey(missionId, 0);
    const facts = { source: 'email' as const, from: BOB, threadIds: [THREAD] };
    const body = { waitKey, eventId: 'm-forged', facts };
    const refusal = await updateRefusal(
      h.client.workflow
        .getHandle(missionId)
        .executeUpdate(missionEventUpdate, { args: [{ ...body, proof: forger.seal('mission-event', missionId, body) }] }),
    );
    expect(refusal).toMatch(/event refused/);
    expect((await h.client.workflow.getHandle(missionId).query(missionStatusQuery)).state).toBe('waiting');

    await env.sleep('5d');
    const result = await h.client.workflow.getHandle(missionId).result();
    expect(result).toMatchObject<Partial<MissionResult>>({ state: 'completed', stepsRun: 2 });
    const audit = await h.audit(missionId);
    expect(of(audit, 'MissionEventRejected')).toEqual([
      expect.objectContaining({ waitKey, reason: expect.stringMatching(/MAC|key|proof/i) }),
    ]);
    expect(of(audit, 'MissionEventReceived')).toEqual([]);
    expect(of(audit, 'MissionStepFinished').map((e) => [e.step, e.outcome])).toEqual([
      [0, 'TimedOut'],
      [1, 'Completed'],
    ]);
  });
});
