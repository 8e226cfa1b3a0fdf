/**
 * Mission commands by mail against real servers (Dovecot, an SMTP server, DKIM made in the test, a
 * worker on the shared dev server with the payload codec): a verified sender whose first line is
 * `missions` gets the missions that name them; `cancel <id>` cancels one of theirs. Another verified
 * sender's cancel of it changes nothing (answered as if it did not exist), and the same command
 * unsigned is no command at all (an ordinary, Untrusted message): the mission keeps running until
 * its owner cancels it.
 */
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { emailMessageId } from '../../channels/email/index.js';
import type { MissionResult } from '../../workflows/mission-messages.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import type { CapturedMail } from '../support/mail-servers.js';
import { dovecotAvailable } from '../support/mail-servers.js';
import { dkimKey, startMailHarness, type MailHarness } from '../support/mail-harness.js';

const ALICE = 'alice@example.com';
const MALLORY = 'mallory@example.com';

let h: MailHarness;
const ids = { alice: '', mallory: '' };
let channelsStarted = 0;

beforeAll(async () => {
  h = await startMailHarness({
    script: { rules: [{ steps: [{ say: 'hello {{message}}' }] }] },
    allowlist: [ALICE, MALLORY],
    agent: { capabilities: ['llm.call'], confirmFirst: [] },
  });
  h.keys.set('example.com', dkimKey('example.com', h.dns));
  h.dns.set('example.com TXT', [['v=spf1 ip4:192.0.2.10 -all']]);
  h.dns.set('_dmarc.example.com TXT', [['v=DMARC1; p=reject']]);
  const wait = [{ wait: '1h' }];
  ids.alice = (await h.missions.create({ goal: 'renew the passport', steps: wait, approvers: [`email:${ALICE}`] })).missionId;
  ids.mallory = (await h.missions.create({ goal: 'mallory plans', steps: wait, approvers: [`email:${MALLORY}`] })).missionId;
  for (const id of Object.values(ids)) await listed(id);
}, 120_000);

afterAll(async () => {
  for (const id of Object.values(ids))
    await h?.client.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  await h?.stop();
});

async function listed(workflowId: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) if (wf.workflowId === workflowId) return;
    if (Date.now() > until) throw new Error(`${workflowId} not listed within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

let n = 0;
const mid = (tag: string): string => `${tag}.${Date.now()}.${++n}@example.com`;
const repliesTo = (m: string): CapturedMail[] => h.smtp.outbound().filter((c) => c.parsed.inReplyTo === `<${m}>`);
async function replyTo(m: string): Promise<string> {
  await h.smtp.waitFor(() => repliesTo(m).length > 0, 45_000, `a reply to ${m}`);
  return repliesTo(m)[0]!.parsed.text?.trim() ?? '';
}
async function mail(from: string, text: string, sign?: false): Promise<{ id: string; reply: string; why: string }> {
  const id = mid('cmd');
  await h.sendAs({ from, subject: 'missions', text, messageId: id, ...(sign === false ? { sign } : {}) });
  const reply = await replyTo(id);
  // What the channel made of the mail (kind, tier and why): the message of an assertion on the reply.
  return { id, reply, why: h.channelLog.filter((l) => l.includes(id)).join('\n') || 'no channel log line for it' };
}
const status = async (id: string): Promise<string> => (await h.client.workflow.getHandle(id).describe()).status.name;

const describeMail = dovecotAvailable() || process.env.CI ? describe : describe.skip;

describeMail('mission commands by mail', () => {
  it('lists and cancels only the sender’s own missions; others and unsigned mail change nothing', async () => {
    await h.startChannel();
    channelsStarted++;
    const alice = await mail(ALICE, 'missions\n\n-- \nAlice');
    expect(alice.reply).toContain('Your missions:');
    expect(alice.reply).toContain(`${ids.alice} — running`);
    expect(alice.reply).toContain('renew the passport');
    expect(alice.reply).not.toContain(ids.mallory);
    // A command is answered directly: no turn ran for it.
    expect(await h.audit(turnWorkflowId('email', emailMessageId(alice.id)))).toEqual([]);

    expect((await mail(ALICE, `show ${ids.alice}`)).reply).toMatch(new RegExp(`^- ${ids.alice} — running.*renew the passport`));
    const shown = await mail(MALLORY, `show ${ids.alice}`);
    expect(shown.reply, shown.why).toBe(`Nothing changed: no mission ${ids.alice} of yours.`);

    const mallory = await mail(MALLORY, `cancel ${ids.alice}`);
    expect(mallory.reply, mallory.why).toBe(`Nothing changed: no mission ${ids.alice} of yours.`);
    // Unsigned, "from" Alice: not verified, so not a command — an ordinary (Untrusted) message.
    const spoofed = await mail(ALICE, `cancel ${ids.alice}`, false);
    expect(spoofed.reply).toBe(`hello cancel ${ids.alice}`);
    expect(await status(ids.alice)).toBe('RUNNING');

    const cancel = await mail(ALICE, `cancel ${ids.alice}`);
    expect(cancel.reply).toBe(`Cancelled mission ${ids.alice}.`);
    expect((await h.client.workflow.getHandle(ids.alice).result()) as MissionResult).toMatchObject({ state: 'cancelled' });
    expect(await status(ids.mallory)).toBe('RUNNING');
  }, 180_000);
  it('pauses and resumes only the sender’s own recurring missions', async () => {
    if (channelsStarted === 0) await h.startChannel();
    const { scheduleId } = await h.missions.schedule({
      goal: 'weekly passport check',
      steps: [{ notify: 'check the passport' }],
      approvers: [`email:${ALICE}`],
      schedule: { every: '7d' },
    });
    try {
      const paused = async () => (await h.client.schedule.getHandle(scheduleId).describe()).state.paused;
      expect((await mail(MALLORY, `pause ${scheduleId}`)).reply).toBe(`Nothing changed: no recurring mission ${scheduleId} of yours.`);
      expect(await paused()).toBe(false);
      expect((await mail(ALICE, `pause ${scheduleId}`)).reply).toBe(`Paused recurring mission ${scheduleId}.`);
      expect(await paused()).toBe(true);
      expect((await mail(ALICE, 'missions')).reply).toContain(`${scheduleId} — paused: weekly passport check`);
      expect((await mail(ALICE, `resume ${scheduleId}`)).reply).toBe(`Resumed recurring mission ${scheduleId}.`);
      expect(await paused()).toBe(false);
    } finally {
      await h.client.schedule
        .getHandle(scheduleId)
        .delete()
        .catch(() => undefined);
    }
  }, 180_000);
});
