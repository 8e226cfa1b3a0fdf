/**
 * The world of the end-to-end encryption tests: a real Synapse, the assistant's Matrix channel on a
 * mission harness (Temporal, PGlite, sealed channel state), and people's clients with matrix-js-sdk's
 * Rust crypto (as Element would run it). `start` (re)starts the channel with the configuration given.
 */
import * as sdk from 'matrix-js-sdk';
import { logger as sdkLogger } from 'matrix-js-sdk/lib/logger.js';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { MatrixClient } from '../../channels/matrix/client.js';
import type { MatrixConfig } from '../../channels/matrix/config.js';
import { startMatrixChannel, type RunningMatrix } from '../../channels/matrix/matrix-channel.js';
import { syncKey } from '../../channels/matrix/state.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import { sessionClearingOf } from '../../app/wiring.js';
import { createAttestor } from '../../infra/attestation.js';
import { GateTokens, gateTokenKey } from '../../infra/gate-tokens.js';
import { openKeyring } from '../../infra/keyring.js';
import { createMissionWaits } from '../../infra/mission-waits.js';
import { SealedStorage, type DomainHandle } from '../../infra/storage/index.js';
import { startMissionHarness, type MissionHarness, type MissionHarnessOptions } from './mission-harness.js';
import { until } from './matrix-person.js';
import { startSynapse, type Synapse, type SynapseUser } from './synapse.js';
import { testConnection, type TestConnection } from './temporal.js';
import { TEST_KDF, TEST_PASSPHRASE } from './turn-harness.js';

(sdkLogger as unknown as { setLevel(level: string): void }).setLevel('silent');

/** What the encryption tests drive. */
export interface E2eeWorld {
  hs: Synapse;
  bot: SynapseUser;
  tc: TestConnection;
  mh: MissionHarness;
  state: DomainHandle;
  missions: MissionGateway;
  /** Starts the channel (stopping a running one first) with `config` over the bot's defaults. */
  start(config: Partial<MatrixConfig>): Promise<void>;
  /** Stops the channel (its keys stay sealed in channel state). */
  stopChannel(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts Synapse, registers the bot, and the assistant's workers for `agent`. */
export async function startE2eeWorld(options: Pick<MissionHarnessOptions, 'script' | 'agent'>): Promise<E2eeWorld> {
  const hs = await startSynapse();
  const bot = await hs.register('aivyx');
  const tc = await testConnection();
  const deliveries = new DeliveryRegistry();
  // Confirm-first calls in conversations open confirmation missions (as `aivyx up` wires them).
  const mh = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    { ...options, deliveries, confirmWith: tc.client },
  );
  const master = await openKeyring(mh.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  const state = SealedStorage.open(mh.db, master).domain('channel_state');
  const missions = new MissionGateway({
    client: tc.client,
    taskQueue: mh.taskQueue,
    attestor: mh.attestor,
    capabilities: options.agent?.capabilities ?? [],
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
  let channel: RunningMatrix | undefined;
  const stopChannel = async () => {
    const running = channel;
    channel = undefined;
    await running?.stop();
  };
  return {
    hs,
    bot,
    tc,
    mh,
    state,
    missions,
    stopChannel,
    async start(config) {
      await stopChannel();
      channel = await startMatrixChannel(
        { homeserver: hs.url, userId: bot.userId, accessToken: bot.accessToken, allowlist: [], roomTiers: {}, ...config },
        { gateway, missions, deliveries, storage: state, gateTokens, log: () => undefined },
        { editIntervalMs: 100, syncTimeoutMs: 1000 },
      );
      await until(async () => (await state.getJson(syncKey(bot.userId))) !== undefined, 'the first sync');
    },
    async stop() {
      await stopChannel();
      await mh.stop();
      await hs.stop();
    },
  };
}

/** A person's client with crypto: matrix-js-sdk and its Rust crypto, keys in memory, syncing. */
export async function cryptoClient(hs: Synapse, user: SynapseUser): Promise<sdk.MatrixClient> {
  const deviceId = await new MatrixClient(hs.url, user.accessToken).deviceId();
  const c = sdk.createClient({ baseUrl: hs.url, accessToken: user.accessToken, userId: user.userId, deviceId });
  await c.initRustCrypto({ useIndexedDB: false });
  const prepared = new Promise<void>((resolve) => c.on(sdk.ClientEvent.Sync, (s) => s === sdk.SyncState.Prepared && resolve()));
  await c.startClient({ initialSyncLimit: 1 });
  await prepared;
  return c;
}

/** A direct chat with the bot, created encrypted by `person`; resolves once the bot has joined. */
export async function encryptedDm(person: sdk.MatrixClient, botId: string): Promise<string> {
  const { room_id } = await person.createRoom({
    preset: sdk.Preset.TrustedPrivateChat,
    is_direct: true,
    invite: [botId],
    initial_state: [{ type: 'm.room.encryption', state_key: '', content: { algorithm: 'm.megolm.v1.aes-sha2' } }],
  });
  await until(() => person.getRoom(room_id)?.getJoinedMemberCount() === 2, 'the bot joins the encrypted chat');
  return room_id;
}

/** One of the bot's messages as a client decrypted it (an edit shows its new text). */
export interface SeenMessage {
  eventId: string;
  body: string;
  replyTo?: string;
}

/** The bot's messages in `roomId` as `person`'s client decrypted them. */
export function botMessagesSeen(person: sdk.MatrixClient, roomId: string, botId: string): SeenMessage[] {
  type Content = { body?: string; 'm.new_content'?: { body?: string } };
  return (person.getRoom(roomId)?.getLiveTimeline().getEvents() ?? [])
    .filter((e) => e.getSender() === botId && e.getType() === 'm.room.message')
    .map((e) => {
      const c = e.getContent<Content>();
      const body = c['m.new_content']?.body ?? c.body ?? '';
      return { eventId: e.getId() ?? '', body, ...(e.replyEventId ? { replyTo: e.replyEventId } : {}) };
    });
}

/** A device's pin as AIVYX_MATRIX_VERIFIED_DEVICES holds it, from the client's own keys (or `ed25519` instead). */
export async function pinOf(c: sdk.MatrixClient, ed25519?: string): Promise<{ userId: string; deviceId: string; ed25519: string }> {
  const keys = await c.getCrypto()!.getOwnDeviceKeys();
  return { userId: c.getUserId()!, deviceId: c.getDeviceId()!, ed25519: ed25519 ?? keys.ed25519 };
}
