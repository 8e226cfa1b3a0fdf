/**
 * Owner-pinned device keys (AIVYX_MATRIX_VERIFIED_DEVICES) against a real Synapse, every device a
 * matrix-js-sdk client with the Rust crypto: the owner's pinned device speaks for her in her
 * encrypted direct chat — SemiTrusted, and its encrypted `!approve` decides the gate and the call
 * runs once. The attacks, each refused with nothing run: a second device of her own account that is
 * not pinned; a device of hers pinned with another key (her pinned device's fingerprint); another
 * allowlisted user's device pinned under her name.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as sdk from 'matrix-js-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matrixMessageId } from '../../channels/matrix/inbound.js';
import { missionStatusQuery, type MissionStatus } from '../../workflows/mission-messages.js';
import { confirmationMissionId, turnWorkflowId } from '../../workflows/turn-ids.js';
import { botMessagesSeen, cryptoClient, encryptedDm, pinOf, startE2eeWorld, type E2eeWorld } from '../support/matrix-e2ee-harness.js';
import { until } from '../support/matrix-person.js';
import { synapseAvailable } from '../support/synapse.js';

const NOTES = mkdtempSync(join(tmpdir(), 'aivyx-mx-verify-'));
const SECRET = join(NOTES, 'secret.txt');
const script = {
  rules: [
    {
      match: 'note',
      steps: [
        { call: [{ tool: 'fs.write', input: { path: SECRET, content: 'the code is 1234' } }] },
        { say: 'saved: {{results}}', sayOnFailure: 'not saved: {{results}}' },
      ],
    },
    { steps: [{ say: 'read you' }] },
  ],
};

let w: E2eeWorld;
/** Alice's pinned device, her unpinned second device, her device pinned with the wrong key; Bob's device. */
let owner: sdk.MatrixClient;
let phone: sdk.MatrixClient;
let wronglyPinned: sdk.MatrixClient;
let bob: sdk.MatrixClient;
let aliceDm: string;
let bobDm: string;

/** Sends `text` encrypted from `device` into `roomId`; the event id. */
async function say(device: sdk.MatrixClient, roomId: string, text: string): Promise<string> {
  await until(() => device.getRoom(roomId) !== null, 'the device knows the room');
  return (await device.sendTextMessage(roomId, text)).event_id;
}
/** The assistant's reply to `eventId` as `reader` decrypted it, once it matches `text`. */
async function replyTo(reader: sdk.MatrixClient, roomId: string, eventId: string, text: RegExp): Promise<string> {
  const seen = () => botMessagesSeen(reader, roomId, w.bot.userId).find((m) => m.replyTo === eventId && text.test(m.body));
  await until(() => seen() !== undefined, `the reply to ${eventId} matching ${text}`, 60_000);
  return seen()!.body;
}
/** The tier the turn for `eventId` started at. */
async function tierOf(eventId: string): Promise<unknown> {
  const started = (await w.mh.audit(turnWorkflowId('matrix', matrixMessageId(eventId)))).find((e) => e.type === 'TurnStarted');
  return (started as { trustTier?: unknown } | undefined)?.trustTier;
}
const decisions = async (missionId: string) =>
  (await w.mh.audit(missionId)).filter((e) => e.type === 'GateApproved' || e.type === 'GateDenied');

const describeMatrix = synapseAvailable() || process.env.CI ? describe : describe.skip;

describeMatrix('Matrix owner-pinned device keys (real Synapse, Rust crypto)', () => {
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
    const alice = await w.hs.register('alice');
    const bobUser = await w.hs.register('bob');
    // Every device logged in and its keys uploaded before the assistant first asks for them.
    owner = await cryptoClient(w.hs, alice);
    phone = await cryptoClient(w.hs, await w.hs.newDevice('alice'));
    wronglyPinned = await cryptoClient(w.hs, await w.hs.newDevice('alice'));
    bob = await cryptoClient(w.hs, bobUser);
    const ownerPin = await pinOf(owner);
    const bobsKey = (await pinOf(bob)).ed25519;
    await w.start({
      allowlist: [alice.userId, bobUser.userId],
      verifiedDevices: [
        ownerPin,
        // Her third device, pinned with her first device's key: the wrong fingerprint for it.
        await pinOf(wronglyPinned, ownerPin.ed25519),
        // Bob's device (id and key) pinned under Alice's name.
        { userId: alice.userId, deviceId: bob.getDeviceId()!, ed25519: bobsKey },
      ],
    });
    aliceDm = await encryptedDm(owner, w.bot.userId);
    bobDm = await encryptedDm(bob, w.bot.userId);
  }, 240_000);
  afterAll(async () => {
    for (const c of [owner, phone, wronglyPinned, bob]) c?.stopClient();
    await w?.stop();
  });

  it('her pinned device’s encrypted message is hers: SemiTrusted, as in an unencrypted direct chat', async () => {
    const hello = await say(owner, aliceDm, 'hello');
    expect(await replyTo(owner, aliceDm, hello, /^read you$/)).toBe('read you');
    expect(await tierOf(hello)).toBe('SemiTrusted');
  });

  it('her pinned device’s encrypted "paid" ends the mission’s wait for it; her unpinned device’s did not', async () => {
    const { missionId } = await w.missions.create({
      goal: 'wait for Alice to pay',
      steps: [{ waitFor: { matrix: { from: '@alice:localhost', contains: 'paid' } }, within: '1h' }],
    });
    const status = () => w.tc.client.workflow.getHandle(missionId).query(missionStatusQuery) as Promise<MissionStatus>;
    await until(async () => (await status()).state === 'waiting', 'the wait');
    const fromPhone = await say(phone, aliceDm, 'I paid it');
    await replyTo(owner, aliceDm, fromPhone, /^read you$/);
    expect(await status()).toMatchObject({ state: 'waiting', step: 0 });
    const paid = await say(owner, aliceDm, 'I paid it, really');
    await until(async () => (await status()).state !== 'waiting', 'the wait ends');
    const received = (await w.mh.audit(missionId)).filter((e) => e.type === 'MissionEventReceived');
    expect(received).toEqual([expect.objectContaining({ eventId: paid })]);
  });

  it('her unpinned second device stays Untrusted: its write is refused and nothing is written', async () => {
    const write = await say(phone, aliceDm, 'note the door code');
    expect(await replyTo(owner, aliceDm, write, /^not saved:/)).toContain('fs.write: Denied');
    expect(await tierOf(write)).toBe('Untrusted');
    expect(existsSync(SECRET)).toBe(false);
  });

  it('her pinned device’s encrypted !approve decides the gate and the call runs once; her unpinned and wrongly pinned devices’ !approve do not', async () => {
    const asked = await say(owner, aliceDm, 'note the door code');
    const missionId = confirmationMissionId(turnWorkflowId('matrix', matrixMessageId(asked)));
    const status = () => w.tc.client.workflow.getHandle(missionId).query(missionStatusQuery) as Promise<MissionStatus>;
    await until(async () => (await status().catch(() => undefined))?.gate?.state === 'open', 'the approval gate');
    expect(await tierOf(asked)).toBe('SemiTrusted');

    // The other devices of her account: their !approve is read (the messages after it are answered, in order) and does nothing.
    for (const device of [phone, wronglyPinned]) {
      await say(device, aliceDm, `!approve ${missionId}/gate-1`);
      const after = await say(device, aliceDm, 'are you there?');
      await replyTo(owner, aliceDm, after, /^read you$/);
      expect(await tierOf(after)).toBe('Untrusted');
    }
    expect(await decisions(missionId)).toEqual([]);
    expect((await status()).gate?.state).toBe('open');
    expect(existsSync(SECRET)).toBe(false);

    const approve = await say(owner, aliceDm, `!approve ${missionId}/gate-1`);
    await replyTo(owner, aliceDm, approve, /^Approved by @alice:localhost/);
    await until(() => botMessagesSeen(owner, aliceDm, w.bot.userId).some((m) => m.body.startsWith('saved:')), 'the call’s result', 60_000);
    expect(readFileSync(SECRET, 'utf8')).toBe('the code is 1234');
    expect(await decisions(missionId)).toEqual([
      expect.objectContaining({
        type: 'GateApproved',
        approver: '@alice:localhost',
        approverChannel: 'matrix',
        approverTier: 'SemiTrusted',
      }),
    ]);
    const again = await say(owner, aliceDm, `!approve ${missionId}/gate-1`);
    // Once decided (and the confirmation done), the gate is closed: a second !approve runs nothing more.
    expect(await replyTo(owner, aliceDm, again, /./)).toMatch(/^(Already decided|Refused: gate .+ is closed)/);
    expect(botMessagesSeen(owner, aliceDm, w.bot.userId).filter((m) => m.body.startsWith('saved:'))).toHaveLength(1);
  });

  it('another user’s device pinned under her name (its own id and key) does not pass: allowlisted Bob stays Untrusted', async () => {
    const write = await say(bob, bobDm, 'note the door code again');
    expect(await replyTo(bob, bobDm, write, /^not saved:/)).toContain('fs.write: Denied');
    expect(await tierOf(write)).toBe('Untrusted');
  });
});
