/**
 * End-to-end encrypted rooms against a real Synapse: the owner writes from matrix-js-sdk with its
 * Rust crypto (as Element would), in a direct chat created encrypted. The channel decrypts with the
 * same Rust crypto; her device is not verified by the assistant (we support no verification), so
 * her message is Untrusted — answered (encrypted: the homeserver holds only ciphertext), but her
 * write is refused and nothing runs. The assistant's
 * keys are sealed in channel state across a restart: a message sent while it was down is read after.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as sdk from 'matrix-js-sdk';
import { logger as sdkLogger } from 'matrix-js-sdk/lib/logger.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { MatrixClient } from '../../channels/matrix/client.js';
import { matrixMessageId } from '../../channels/matrix/inbound.js';
import { startMatrixChannel, type RunningMatrix } from '../../channels/matrix/matrix-channel.js';
import { syncKey } from '../../channels/matrix/state.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import { createAttestor } from '../../infra/attestation.js';
import { GateTokens, gateTokenKey } from '../../infra/gate-tokens.js';
import { openKeyring } from '../../infra/keyring.js';
import { createMissionWaits } from '../../infra/mission-waits.js';
import { SealedStorage, type DomainHandle } from '../../infra/storage/index.js';
import { missionStatusQuery, type MissionStatus } from '../../workflows/mission-messages.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import { sessionClearingOf } from '../../app/wiring.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { Person, until } from '../support/matrix-person.js';
import { startSynapse, synapseAvailable, type Synapse, type SynapseUser } from '../support/synapse.js';
import { testConnection, type TestConnection } from '../support/temporal.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

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

(sdkLogger as unknown as { setLevel(level: string): void }).setLevel('silent');

let tc: TestConnection;
let mh: MissionHarness;
let hs: Synapse;
let state: DomainHandle;
let missions: MissionGateway;
let bot: SynapseUser;
let alice: Person;
let owner: sdk.MatrixClient;
let channel: RunningMatrix | undefined;
let secretDm: string;
const deliveries = new DeliveryRegistry();
let start: () => Promise<void>;

/** Alice's client with crypto: matrix-js-sdk and its Rust crypto, keys in memory, syncing. */
async function cryptoClient(user: SynapseUser): Promise<sdk.MatrixClient> {
  const deviceId = await new MatrixClient(hs.url, user.accessToken).deviceId();
  const c = sdk.createClient({ baseUrl: hs.url, accessToken: user.accessToken, userId: user.userId, deviceId });
  await c.initRustCrypto({ useIndexedDB: false });
  const prepared = new Promise<void>((resolve) => c.on(sdk.ClientEvent.Sync, (s) => s === sdk.SyncState.Prepared && resolve()));
  await c.startClient({ initialSyncLimit: 1 });
  await prepared;
  return c;
}

/** The assistant's messages as Alice's client decrypted them (an edit shows its new text). */
function ownerSees(): { body: string; replyTo?: string }[] {
  type Content = { body?: string; 'm.new_content'?: { body?: string } };
  return (owner.getRoom(secretDm)?.getLiveTimeline().getEvents() ?? [])
    .filter((e) => e.getSender() === bot.userId && e.getType() === 'm.room.message')
    .map((e) => {
      const c = e.getContent<Content>();
      return { body: c['m.new_content']?.body ?? c.body ?? '', ...(e.replyEventId ? { replyTo: e.replyEventId } : {}) };
    });
}
/** Waits until Alice's client shows a reply to `eventId` and a message from the assistant matching `text`. */
async function answered(eventId: string, text: RegExp, what: string): Promise<string> {
  await until(() => ownerSees().some((m) => m.replyTo === eventId) && ownerSees().some((m) => text.test(m.body)), what, 60_000);
  return ownerSees().find((m) => text.test(m.body))!.body;
}
/** What the homeserver holds of the room: the type of each event the assistant sent. */
async function wireTypesFromBot(): Promise<string[]> {
  const events = (await alice.api.sync(undefined, 0, new AbortController().signal)).rooms?.join?.[secretDm]?.timeline?.events ?? [];
  return events.filter((e) => e.sender === bot.userId).map((e) => e.type);
}
async function sendEncrypted(text: string): Promise<string> {
  return (await owner.sendTextMessage(secretDm, text)).event_id;
}

const describeMatrix = synapseAvailable() || process.env.CI ? describe : describe.skip;

describeMatrix('Matrix end-to-end encrypted rooms (real Synapse, Rust crypto)', () => {
  beforeAll(async () => {
    hs = await startSynapse();
    bot = await hs.register('aivyx');
    const aliceUser = await hs.register('alice');
    alice = new Person(hs, aliceUser);
    tc = await testConnection();
    mh = await startMissionHarness(
      { nativeConnection: tc.connection, namespace: tc.namespace },
      {
        script,
        deliveries,
        agent: {
          capabilities: ['fs.write', 'llm.call'],
          confirmFirst: ['fs.write'],
          tierPolicy: { semiTrusted: { 'fs.write': [`${NOTES}/**`] } },
          trustedPlaces: { owners: [`matrix:${alice.id}`] },
        },
      },
    );
    const master = await openKeyring(mh.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
    state = SealedStorage.open(mh.db, master).domain('channel_state');
    missions = new MissionGateway({
      client: tc.client,
      taskQueue: mh.taskQueue,
      attestor: mh.attestor,
      capabilities: ['fs.write'],
      events: { waits: createMissionWaits(state), store: state },
    });
    const gateway = new TurnGateway({
      client: tc.client,
      taskQueue: mh.taskQueue,
      attestor: createAttestor(master.subkey('attestation')),
      hub: mh.hub,
      sessions: sessionClearingOf(mh.db, master),
    });
    const gateTokens = new GateTokens(gateTokenKey(master.subkey('channel_state')), state);
    start = async () => {
      channel = await startMatrixChannel(
        { homeserver: hs.url, userId: bot.userId, accessToken: bot.accessToken, allowlist: [alice.id], roomTiers: {} },
        { gateway, missions, deliveries, storage: state, gateTokens, log: () => undefined },
        { editIntervalMs: 100, syncTimeoutMs: 1000 },
      );
      await until(async () => (await state.getJson(syncKey(bot.userId))) !== undefined, 'the first sync');
    };
    await start();
    owner = await cryptoClient(aliceUser);
    const { room_id } = await owner.createRoom({
      preset: sdk.Preset.TrustedPrivateChat,
      is_direct: true,
      invite: [bot.userId],
      initial_state: [{ type: 'm.room.encryption', state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } }],
    });
    secretDm = room_id;
    await until(() => owner.getRoom(secretDm)?.getJoinedMemberCount() === 2, 'the bot joins the encrypted chat');
  }, 180_000);
  afterAll(async () => {
    owner?.stopClient();
    await channel?.stop();
    await mh?.stop();
    await hs?.stop();
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
    const started = (await mh.audit(turnWorkflowId('matrix', matrixMessageId(asked)))).find((e) => e.type === 'TurnStarted');
    expect(started).toMatchObject({ channel: 'Matrix', trustTier: 'Untrusted' });
  });

  it('from her unverified device, an encrypted !approve decides no gate and an encrypted "paid" ends no wait', async () => {
    const status = (id: string) => tc.client.workflow.getHandle(id).query(missionStatusQuery) as Promise<MissionStatus>;
    const { missionId: waiting } = await missions.create({
      goal: 'wait for Alice to pay',
      steps: [{ waitFor: { matrix: { from: alice.id, contains: 'paid' } }, within: '1h' }],
    });
    const { missionId: gated } = await missions.create({
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
    expect((await mh.audit(gated)).filter((e) => e.type === 'GateApproved' || e.type === 'GateDenied')).toEqual([]);
    expect(await status(waiting)).toMatchObject({ state: 'waiting', step: 0 });
    expect((await mh.audit(waiting)).filter((e) => e.type === 'MissionEventReceived')).toEqual([]);
    expect((await mh.audit(turnWorkflowId('matrix', matrixMessageId(paid)))).find((e) => e.type === 'TurnStarted')).toMatchObject({
      trustTier: 'Untrusted',
    });
    await missions.cancel(waiting, 'test done');
    await missions.cancel(gated, 'test done');
  });

  it('the assistant’s keys are sealed across a restart: a message sent while it was down is read after', async () => {
    await channel!.stop();
    channel = undefined;
    expect(await state.get(`mx-crypto/aivyx-mx-${bot.userId}-${await new MatrixClient(hs.url, bot.accessToken).deviceId()}`)).toBeDefined();
    const whileDown = await sendEncrypted('are you there?');
    await start();
    expect(await answered(whileDown, /^read you$/, 'the reply after the restart')).toBe('read you');
  });
});
