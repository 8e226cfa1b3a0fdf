/**
 * The Matrix channel: a sync loop over the Client-Server API whose token lives in sealed channel
 * state and moves past a batch only once every event in it was handled (a crash fetches the batch
 * again; each event runs once, inbound.ts). Invitations are accepted (a room's tier, not its
 * invitation, decides what its messages may do). Replies and gate notices go through the deliverer
 * (delivery.ts), which also runs alone in an `aivyx worker`.
 */
import { createBackoff } from '../kit/backoff.js';
import type { ChannelContext, OutboundContext } from '../contract.js';
import { createApprovals } from './approvals.js';
import { AivyxError } from '../../core/errors.js';
import { MatrixClient, type OutgoingEncryption, type SyncBatch } from './client.js';
import type { MatrixConfig } from './config.js';
import { startMatrixCrypto, type MatrixCrypto } from './crypto.js';
import { cryptoKeyStore } from './crypto-store.js';
import { createMatrixDeliverer } from './delivery.js';
import { createMatrixInbound, MATRIX_CHANNEL_NAME } from './inbound.js';
import { syncKey } from './state.js';

/** Starts the Rust crypto for the token's device; without it (no device, a failure) encrypted rooms are not read. */
async function startCrypto(client: MatrixClient, config: MatrixConfig, ctx: ChannelContext): Promise<MatrixCrypto | undefined> {
  const self = config.userId;
  try {
    const deviceId = await client.deviceId();
    const keys = cryptoKeyStore(ctx.storage, `aivyx-mx-${self}-${deviceId}`);
    return await startMatrixCrypto({ client, userId: self, deviceId, keys, pins: config.verifiedDevices ?? [], log: ctx.log });
  } catch (err) {
    ctx.log(`Matrix end-to-end encryption is off (encrypted rooms are not read): ${(err as Error).message}`);
    return undefined;
  }
}

/**
 * Sends into encrypted rooms encrypted for their joined members' devices; without keys in this
 * process (an `aivyx worker`, encryption off) a send into an encrypted room is refused: it never goes
 * out in the clear.
 */
function encryptOutgoing(client: MatrixClient, crypto: MatrixCrypto | undefined): OutgoingEncryption {
  return async (roomId, type, content) => {
    if (!(await client.isEncrypted(roomId))) return { type, content };
    if (!crypto)
      throw new AivyxError('Channel', `Matrix room ${roomId} is end-to-end encrypted and this process holds no keys for it`, {
        hint: 'replies to encrypted rooms are sent by the process that runs the Matrix channel (aivyx up)',
      });
    return crypto.encrypt(roomId, await client.joinedMembers(roomId), type, content);
  };
}

/** Options beyond the configuration (tests shorten them). */
export interface MatrixTuning {
  /** Minimum gap between streamed edits of one reply (default 1,000 ms). */
  editIntervalMs?: number;
  /** Long-poll timeout of one sync (default 30 s). */
  syncTimeoutMs?: number;
}

/** A started Matrix channel. */
export interface RunningMatrix {
  stop(): Promise<void>;
}

/** Only the outbound side, registered as `matrix` (an `aivyx worker`; a gateway syncs). */
export async function startMatrixOutbound(config: MatrixConfig, ctx: OutboundContext): Promise<RunningMatrix> {
  const abort = new AbortController();
  const client = new MatrixClient(config.homeserver, config.accessToken, abort.signal);
  client.encryption = encryptOutgoing(client, undefined);
  const unregister = ctx.deliveries.register(
    MATRIX_CHANNEL_NAME,
    createMatrixDeliverer({
      client,
      self: config.userId,
      store: ctx.storage,
      tokens: ctx.gateTokens,
      closeStream: async () => undefined,
      log: ctx.log,
    }),
  );
  return {
    async stop() {
      unregister();
      abort.abort();
    },
  };
}

/** How long a handled event id is kept: a sync never goes back further than its stored token. */
export const SEEN_KEPT_MS = 30 * 24 * 3600_000;

/** Drops `mx-seen/` records older than SEEN_KEPT_MS (a message's turn record still dedupes its turn). */
async function pruneSeen(store: ChannelContext['storage'], now = Date.now()): Promise<void> {
  const old: string[] = [];
  for await (const { key, value } of store.scan('mx-seen/')) {
    const at = (JSON.parse(Buffer.from(value).toString('utf8')) as { at?: number }).at ?? 0;
    if (now - at > SEEN_KEPT_MS) old.push(key);
  }
  for (const key of old) await store.delete(key);
}

/** Starts the Matrix channel; resolves once it has positioned its sync stream. */
export async function startMatrixChannel(config: MatrixConfig, ctx: ChannelContext, tuning: MatrixTuning = {}): Promise<RunningMatrix> {
  const abort = new AbortController();
  const client = new MatrixClient(config.homeserver, config.accessToken, abort.signal);
  const self = await client.whoami();
  if (self !== config.userId) throw new Error(`the Matrix access token is for ${self}, not AIVYX_MATRIX_USER_ID ${config.userId}`);
  let stopped = false;
  const store = ctx.storage;
  const crypto = config.encryption === false ? undefined : await startCrypto(client, config, ctx);
  client.encryption = encryptOutgoing(client, crypto);
  const approvals = createApprovals({
    client,
    store,
    missions: ctx.missions,
    gateTokens: ctx.gateTokens,
    gateway: ctx.gateway,
    tierOf: (roomId, sender) => inbound.tierOf(roomId, sender),
    runningTurn: (roomId, sender) => inbound.runningTurn(roomId, sender),
    log: ctx.log,
  });
  const inbound = createMatrixInbound({
    client,
    store,
    self,
    policy: { allowlist: config.allowlist, roomTiers: config.roomTiers },
    gateway: ctx.gateway,
    approvals,
    ...(crypto ? { crypto } : {}),
    offerEvent: (event) => ctx.missions.offerEvent(event),
    editInterval: tuning.editIntervalMs ?? 1000,
    isStopped: () => stopped,
    log: ctx.log,
  });
  const unregister = ctx.deliveries.register(
    MATRIX_CHANNEL_NAME,
    createMatrixDeliverer({ client, self, store, tokens: ctx.gateTokens, closeStream: inbound.closeStream, log: ctx.log }),
  );

  /** Joins invitations, then handles every timeline event of the batch; a throw keeps the batch for the next round. */
  async function handleBatch(batch: SyncBatch, history: boolean): Promise<void> {
    // Room keys arrive as to-device messages, in this batch or an earlier one: before the events they open.
    await crypto?.onSync(batch);
    for (const roomId of Object.keys(batch.rooms?.invite ?? {})) await client.join(roomId);
    if (!history) return;
    for (const [roomId, room] of Object.entries(batch.rooms?.join ?? {}))
      for (const ev of room.timeline?.events ?? []) await inbound.handle(roomId, ev);
  }

  const key = syncKey(self);
  const backoff = createBackoff(500, 30_000);
  async function loop(): Promise<void> {
    let since = (await store.getJson<{ since: string }>(key))?.since;
    while (!stopped) {
      try {
        const batch = await client.sync(since, tuning.syncTimeoutMs ?? 30_000, abort.signal);
        // A first start only positions the stream: the rooms' history is not a pile of new requests.
        await handleBatch(batch, since !== undefined);
        // The keys before the token: a crash in between reads the batch again, which the crypto tolerates.
        await crypto?.persist();
        since = batch.next_batch;
        await store.putJson(key, { since });
        backoff.reset();
      } catch (err) {
        if (stopped) return;
        ctx.log(`sync: ${(err as Error).message}; retrying in ${backoff.next} ms`);
        await backoff.wait();
      }
    }
  }
  const running = loop();
  void pruneSeen(store).catch((err: unknown) => ctx.log(`pruning seen events: ${(err as Error).message}`));
  return {
    async stop() {
      stopped = true;
      unregister();
      abort.abort();
      backoff.wake();
      await running;
      await crypto?.close();
    },
  };
}
