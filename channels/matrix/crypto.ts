/**
 * End-to-end encryption for the Matrix channel through matrix-js-sdk's Rust crypto
 * (`@matrix-org/matrix-sdk-crypto-wasm`, the `OlmMachine` that matrix-js-sdk's `initRustCrypto`
 * runs), fed by our own sync loop: the to-device messages, device-list changes and one-time-key
 * counts of each batch go into the machine, and the requests it wants made (upload our device keys,
 * query others' devices, claim one-time keys, send room keys) are made over the same HTTP client.
 *
 * Trust: a decrypted message says which device sent it. The one verification we support is the
 * owner's pin (verify.ts, AIVYX_MATRIX_VERIFIED_DEVICES): a message counts as verified only when it
 * is, authenticated, from a device pinned with its ed25519 key. Every other encrypted message is
 * Untrusted — it can talk with the assistant, never act as its owner (DESIGN.md, "Matrix").
 */
import * as wasm from '@matrix-org/matrix-sdk-crypto-wasm';
import type { MatrixClient, MatrixEvent, OutgoingEvent } from './client.js';
import type { CryptoKeyStore } from './crypto-store.js';
import { fromPinnedDevice, type DevicePin } from './verify.js';

/** The crypto parts of a /sync response. */
export interface CryptoSyncParts {
  to_device?: { events?: unknown[] };
  device_lists?: { changed?: string[]; left?: string[] };
  device_one_time_keys_count?: Record<string, number>;
  device_unused_fallback_key_types?: string[];
}

/** A decrypted room event and what the crypto knows of its sender's device. */
export interface DecryptedMatrixEvent {
  /** The plaintext event (type and content from the ciphertext; id, sender, time from the outer event). */
  event: MatrixEvent;
  /** True only when the sending device is one the owner pinned, and the message authenticated as from it (verify.ts). */
  verified: boolean;
  /** The sending device's id, when the crypto knows it. */
  device?: string;
}

/** The channel's crypto. */
export interface MatrixCrypto {
  /** Feeds a sync batch's crypto parts into the machine, then makes the requests it wants made. */
  onSync(parts: CryptoSyncParts): Promise<void>;
  /** Decrypts an `m.room.encrypted` event; undefined when it cannot (no key for it: logged). */
  decrypt(roomId: string, ev: MatrixEvent): Promise<DecryptedMatrixEvent | undefined>;
  /** Encrypts an event for every device of the room's joined `members` (sharing the room key with them first). */
  encrypt(roomId: string, members: string[], type: string, content: Record<string, unknown>): Promise<OutgoingEvent>;
  /** Makes every request the machine has queued (our keys first: before anyone can encrypt to us). */
  flush(): Promise<void>;
  /** Seals the keys into channel state if anything changed since the last time (crypto-store.ts). */
  persist(): Promise<void>;
  /** Persists, then closes the machine and drops its in-memory copy (the sealed one is what the next start reads). */
  close(): Promise<void>;
}

/** The request's HTTP call: method, path under /_matrix/client/v3, body. */
function routeOf(req: Awaited<ReturnType<wasm.OlmMachine['outgoingRequests']>>[number]): [string, string, string] {
  if (req instanceof wasm.KeysUploadRequest) return ['POST', '/keys/upload', req.body];
  if (req instanceof wasm.KeysQueryRequest) return ['POST', '/keys/query', req.body];
  if (req instanceof wasm.KeysClaimRequest) return ['POST', '/keys/claim', req.body];
  if (req instanceof wasm.SignatureUploadRequest) return ['POST', '/keys/signatures/upload', req.body];
  if (req instanceof wasm.ToDeviceRequest)
    return ['PUT', `/sendToDevice/${encodeURIComponent(req.event_type)}/${encodeURIComponent(req.txn_id)}`, req.body];
  if (req instanceof wasm.RoomMessageRequest)
    return [
      'PUT',
      `/rooms/${encodeURIComponent(req.room_id)}/send/${encodeURIComponent(req.event_type)}/${encodeURIComponent(req.txn_id)}`,
      req.body,
    ];
  return ['PUT', `/room_keys/keys?version=${encodeURIComponent(req.version)}`, req.body];
}

/** What starting the crypto needs. */
export interface MatrixCryptoDeps {
  client: MatrixClient;
  userId: string;
  deviceId: string;
  /** Where the keys are kept between starts (crypto-store.ts). */
  keys: CryptoKeyStore;
  /** Devices verified out of band; none: no encrypted message is from a verified device. */
  pins?: readonly DevicePin[];
  log: (line: string) => void;
}

// The Rust crypto logs at debug level by default: only its warnings and errors, and on stderr.
let tracing: wasm.Tracing | undefined;

/** Starts the Rust crypto for the bot's device and uploads its keys if it has not yet. */
export async function startMatrixCrypto(deps: MatrixCryptoDeps): Promise<MatrixCrypto> {
  await wasm.initAsync();
  tracing ??= new wasm.Tracing(wasm.LoggerLevel.Warn);
  tracing.turnOn();
  const { client, log, keys } = deps;
  const restored = await keys.load();
  const machine = await wasm.OlmMachine.initialize(new wasm.UserId(deps.userId), new wasm.DeviceId(deps.deviceId), keys.storeName);
  // Its public session key, for the owner to compare with what their client shows for the assistant's session.
  const sessionKey = machine.identityKeys.ed25519.toBase64();
  log(`Matrix end-to-end encryption: device ${deps.deviceId} (session key ${sessionKey}), ${restored ? 'keys restored' : 'new keys'}`);
  let flushing: Promise<void> = Promise.resolve();
  // Whether the machine's store may have changed since it was last sealed.
  let dirty = !restored;

  async function makeRequests(): Promise<void> {
    for (const req of await machine.outgoingRequests()) {
      const [method, path, body] = routeOf(req);
      const response = await client.request(method, path, JSON.parse(body) as unknown);
      await machine.markRequestAsSent(req.id, req.type, JSON.stringify(response));
      dirty = true;
    }
  }
  /** Makes one request the machine handed out directly (a key claim, a room key's to-device messages). */
  async function send(req: Parameters<typeof routeOf>[0]): Promise<void> {
    const [method, path, body] = routeOf(req);
    const response = await client.request(method, path, JSON.parse(body) as unknown);
    await machine.markRequestAsSent(req.id, req.type, JSON.stringify(response));
    dirty = true;
  }

  let encrypting: Promise<unknown> = Promise.resolve();
  async function encryptNow(roomId: string, members: string[], type: string, content: Record<string, unknown>): Promise<OutgoingEvent> {
    // Fresh ids for each call: the machine takes ownership of what it is passed (wasm-bindgen moves them).
    const users = () => members.map((u) => new wasm.UserId(u));
    const room = () => new wasm.RoomId(roomId);
    await machine.updateTrackedUsers(users());
    await flush(); // their devices' keys
    const claim = await machine.getMissingSessions(users());
    if (claim) await send(claim);
    for (const req of (await machine.shareRoomKey(room(), users(), new wasm.EncryptionSettings())) as wasm.ToDeviceRequest[])
      await send(req);
    const encrypted = JSON.parse(await machine.encryptRoomEvent(room(), type, JSON.stringify(content))) as Record<string, unknown>;
    dirty = true;
    return { type: 'm.room.encrypted', content: encrypted };
  }

  async function persist(): Promise<void> {
    if (!dirty) return;
    dirty = false;
    await keys.save();
  }
  // One at a time: the machine hands out the same pending request until it is marked sent.
  const flush = (): Promise<void> => (flushing = flushing.then(makeRequests, makeRequests));

  /** Whether the decrypted event is from a pinned device (verify.ts), by what the crypto store holds of that device. */
  async function verifiedDevice(sender: string, d: wasm.DecryptedRoomEvent): Promise<boolean> {
    const senderDevice = d.senderDevice?.toString();
    if (!senderDevice || !deps.pins?.length) return false;
    const device = await machine.getDevice(new wasm.UserId(sender), new wasm.DeviceId(senderDevice));
    const known = device && { ed25519: device.ed25519Key?.toBase64(), curve25519: device.curve25519Key?.toBase64() };
    const facts = {
      sender,
      senderDevice,
      senderCurve25519Key: d.senderCurve25519Key,
      senderClaimedEd25519Key: d.senderClaimedEd25519Key,
      shieldCode: d.shieldState(false)?.code,
    };
    const verified = fromPinnedDevice(deps.pins, facts, known);
    // The owner pinned this device, yet it did not pass: a wrong fingerprint is the usual cause.
    if (!verified && deps.pins.some((p) => p.userId === sender && p.deviceId === senderDevice))
      log(`a message from pinned device ${senderDevice} of ${sender} did not match its pin (AIVYX_MATRIX_VERIFIED_DEVICES): Untrusted`);
    return verified;
  }

  await flush();
  return {
    async onSync(parts) {
      const lists = new wasm.DeviceLists(
        (parts.device_lists?.changed ?? []).map((u) => new wasm.UserId(u)),
        (parts.device_lists?.left ?? []).map((u) => new wasm.UserId(u)),
      );
      const counts = new Map(Object.entries(parts.device_one_time_keys_count ?? {}));
      const fallback = parts.device_unused_fallback_key_types ? new Set(parts.device_unused_fallback_key_types) : null;
      const toDevice = parts.to_device?.events ?? [];
      await machine.receiveSyncChanges(JSON.stringify(toDevice), lists, counts, fallback);
      if (toDevice.length > 0 || lists.changed.length > 0 || lists.left.length > 0) dirty = true;
      await flush();
    },
    async decrypt(roomId, ev) {
      try {
        // Its device's keys, so that the sender device can be looked up (a query the next flush makes).
        await machine.updateTrackedUsers([new wasm.UserId(ev.sender)]);
        await flush();
        const settings = new wasm.DecryptionSettings(wasm.TrustRequirement.Untrusted);
        const d = await machine.decryptRoomEvent(JSON.stringify(ev), new wasm.RoomId(roomId), settings);
        const inner = JSON.parse(d.event) as { type?: unknown; content?: unknown };
        // The ciphertext's claimed sender must be the event's sender (the homeserver's word): else it is not theirs.
        if (d.sender?.toString() !== ev.sender || typeof inner.type !== 'string' || typeof inner.content !== 'object' || !inner.content) {
          log(`an encrypted event in ${roomId} did not decrypt to a message from its sender`);
          return undefined;
        }
        const event: MatrixEvent = { ...ev, type: inner.type, content: inner.content as Record<string, unknown> };
        const device = d.senderDevice?.toString();
        return { event, verified: await verifiedDevice(ev.sender, d), ...(device ? { device } : {}) };
      } catch (err) {
        log(`an encrypted event in ${roomId} could not be decrypted: ${(err as Error).message}`);
        return undefined;
      }
    },
    encrypt(roomId, members, type, content) {
      // One at a time: sharing a room key twice at once would make two sessions.
      const next = encrypting.then(
        () => encryptNow(roomId, members, type, content),
        () => encryptNow(roomId, members, type, content),
      );
      encrypting = next.catch(() => undefined);
      return next;
    },
    flush,
    persist,
    async close() {
      await Promise.all([flushing.catch(() => undefined), encrypting]);
      await persist();
      try {
        machine.close();
      } catch (err) {
        log(`closing the Matrix crypto: ${(err as Error).message}`);
      }
      await keys.drop();
    },
  };
}
