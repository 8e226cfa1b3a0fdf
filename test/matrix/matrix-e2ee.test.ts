/**
 * End-to-end encrypted rooms against a real Synapse: the owner writes from matrix-js-sdk with its
 * Rust crypto (as Element would), in a direct chat created encrypted. The channel decrypts with the
 * same Rust crypto; her device is not pinned as verified (AIVYX_MATRIX_VERIFIED_DEVICES), so
 * her message is Untrusted — answered (encrypted: the homeserver holds only ciphertext), but her
 * write is refused and nothing runs. The assistant's
 * keys are sealed in channel state across a restart: a message sent while it was down is read after.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as sdk from 'matrix-js-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MatrixClient } from '../../channels/matrix/client.js';
import { matrixMessageId } from '../../channels/matrix/inbound.js';
import { missionStatusQuery, type MissionStatus } from '../../workflows/mission-messages.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import { botMessagesSeen, cryptoClient, encryptedDm, startE2eeWorld, type E2eeWorld } from '../support/matrix-e2ee-harness.js';
import { Person, until } from '../support/matrix-person.js';
import { synapseAvailable } from '../support/synapse.js';

const NOTES = mkdtempSync(join(tmpdir(), 'aivyx-mx-e2ee-'));
const script = {
  rules: [
    {
      match: 'note',
      steps: [
        { call: [{ tool: 'fs.write', input: { path: join(NOTES, 'secret.txt'), content: 'the code is 1234' } }] },
        { say: 'saved: {{results}}', sayOnFailure: 'not saved: {{results}}' },
      ],
    },
    { steps: [{ say: 'read you' }] },
  ],
};

let w: E2eeWorld;
let alice: Person;
let owner: sdk.MatrixClient;
let secretDm: string;
const start = () => w.start({ allowlist: [alice.id] });

/** The assistant's messages as Alice's client decrypted them (an edit shows its new text). */
const ownerSees = () => botMessagesSeen(owner, secretDm, w.bot.userId);
/** Waits until Alice's client shows a reply to `eventId` and a message from the assistant matching `text`. */
async function answered(eventId: string, text: RegExp, what: string): Promise<string> {
  await until(() => ownerSees().some((m) => m.replyTo === eventId) && ownerSees().some((m) => text.test(m.body)), what, 60_000);
  return ownerSees().find((m) => text.test(m.body))!.body;
}
/** What the homeserver holds of the room: the type of each event the assistant sent. */
async function wireTypesFromBot(): Promise<string[]> {
  const events = (await alice.api.sync(undefined, 0, new AbortController().signal)).rooms?.join?.[secretDm]?.timeline?.events ?? [];
  return events.filter((e) => e.sender === w.bot.userId).map((e) => e.type);
}
async function sendEncrypted(text: string): Promise<string> {
  return (await owner.sendTextMessage(secretDm, text)).event_id;
}

const describeMatrix = synapseAvailable() || process.env.CI ? describe : describe.skip;

describeMatrix('Matrix end-to-end encrypted rooms (real Synapse, Rust crypto)', () => {
  beforeAll(async () => {
    w = await startE2eeWorld({
      script,
      agent: {
        capabilities: ['fs.write', 'llm.call'],
        confirmFirst: ['fs.write'],
        tierPolicy: { semiTrusted: { 'fs.write': [`${NOTES}/**`] } },
        trustedPlaces: { owners: ['matrix:@alice:localhost'] },
      },
    });
    const aliceUser = await w.hs.register('alice');
    alice = new Person(w.hs, aliceUser);
    await start();
    owner = await cryptoClient(w.hs, aliceUser);
    secretDm = await encryptedDm(owner, w.bot.userId);
  }, 180_000);
  afterAll(async () => {
    owner?.stopClient();
    await w?.stop();
  });

  it('the owner’s encrypted message from her unverified device is read and answered, as Untrusted: her write is refused', async () => {
    const asked = await sendEncrypted('note the door code');
    const reply = await answered(asked, /^not saved:/, 'the reply to the encrypted message');
    expect(reply).toContain('fs.write: Denied');
    // The homeserver holds only ciphertext, both ways.
    const raw = (await alice.api.sync(undefined, 0, new AbortController().signal)).rooms?.join?.[secretDm]?.timeline?.events ?? [];
    expect(raw.find((e) => e.event_id === asked)?.type).toBe('m.room.encrypted');
    expect(new Set(await wireTypesFromBot())).toEqual(new Set(['m.room.encrypted']));
    expect(existsSync(join(NOTES, 'secret.txt'))).toBe(false);
    const started = (await w.mh.audit(turnWorkflowId('matrix', matrixMessageId(asked)))).find((e) => e.type === 'TurnStarted');
    expect(started).toMatchObject({ channel: 'Matrix', trustTier: 'Untrusted' });
  });

  it('from her unverified device, an encrypted !approve decides no gate and an encrypted "paid" ends no wait', async () => {
    const status = (id: string) => w.tc.client.workflow.getHandle(id).query(missionStatusQuery) as Promise<MissionStatus>;
    const { missionId: waiting } = await w.missions.create({
      goal: 'wait for Alice to pay',
      steps: [{ waitFor: { matrix: { from: alice.id, contains: 'paid' } }, within: '1h' }],
    });
    const { missionId: gated } = await w.missions.create({
      goal: 'keep the door code',
      steps: ['note the door code'],
      approvers: [`matrix:${alice.id}`],
    });
    await until(
      async () => (await status(waiting)).state === 'waiting' && (await status(gated)).gate?.state === 'open',
      'the wait and the gate',
    );

    await sendEncrypted(`!approve ${gated}/gate-1`);
    const paid = await sendEncrypted('I paid it');
    // Handled in order: once "I paid it" is answered (as an ordinary, Untrusted message), the !approve was read too.
    await answered(paid, /^read you$/, 'the answer to "I paid it"');
    expect(await status(gated)).toMatchObject({ gate: { state: 'open' } });
    expect((await w.mh.audit(gated)).filter((e) => e.type === 'GateApproved' || e.type === 'GateDenied')).toEqual([]);
    expect(await status(waiting)).toMatchObject({ state: 'waiting', step: 0 });
    expect((await w.mh.audit(waiting)).filter((e) => e.type === 'MissionEventReceived')).toEqual([]);
    expect((await w.mh.audit(turnWorkflowId('matrix', matrixMessageId(paid)))).find((e) => e.type === 'TurnStarted')).toMatchObject({
      trustTier: 'Untrusted',
    });
    await w.missions.cancel(waiting, 'test done');
    await w.missions.cancel(gated, 'test done');
  });

  it('the assistant’s keys are sealed across a restart: a message sent while it was down is read after', async () => {
    await w.stopChannel();
    expect(
      await w.state.get(`mx-crypto/aivyx-mx-${w.bot.userId}-${await new MatrixClient(w.hs.url, w.bot.accessToken).deviceId()}`),
    ).toBeDefined();
    const whileDown = await sendEncrypted('are you there?');
    await start();
    expect(await answered(whileDown, /^read you$/, 'the reply after the restart')).toBe('read you');
  });
});
