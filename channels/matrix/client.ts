/**
 * A thin client of the Matrix Client-Server API (v3) over fetch: the few calls the channel makes —
 * sync, send (with a transaction id, so a repeated send is the same event), edit (`m.replace`),
 * joined members, join, create a DM, upload a file. Why not an SDK: DESIGN.md, "Matrix".
 */
import { createHash } from 'node:crypto';
import type { CryptoSyncParts } from './crypto.js';
import { AivyxError } from '../../core/errors.js';

/** One timeline event as /sync returns it (only the fields the channel reads). */
export interface MatrixEvent {
  event_id: string;
  type: string;
  /** Set by the homeserver from the access token (local users) or the signed event (federation): never from content. */
  sender: string;
  origin_server_ts: number;
  content: Record<string, unknown>;
}

/** What one /sync returns that the channel reads (the crypto parts feed the Rust crypto, crypto.ts). */
export interface SyncBatch extends CryptoSyncParts {
  next_batch: string;
  rooms?: {
    join?: Record<string, { timeline?: { events?: MatrixEvent[] } }>;
    invite?: Record<string, unknown>;
  };
}

/** The relation of an event (`m.relates_to`), if it has one. */
export interface Relation {
  rel_type?: string;
  event_id?: string;
  key?: string;
  'm.in_reply_to'?: { event_id?: string };
}

/** Only timeline events the channel acts on; no presence, no account data. */
const SYNC_FILTER = JSON.stringify({
  presence: { types: [] },
  account_data: { types: [] },
  room: {
    timeline: { types: ['m.room.message', 'm.reaction', 'm.room.encrypted'], limit: 100 },
    state: { types: [] },
    ephemeral: { types: [] },
    account_data: { types: [] },
  },
});

/** A transaction id from an idempotency key: the homeserver answers a repeat with the first event. */
const txnId = (key: string): string => createHash('sha256').update(key).digest('base64url').slice(0, 32);

/** The relation of `content`, if any. */
export function relationOf(content: Record<string, unknown>): Relation | undefined {
  const r = content['m.relates_to'];
  return r && typeof r === 'object' ? (r as Relation) : undefined;
}

/** A Matrix user id (`@local:server`). */
export const MXID = /^@[a-z0-9._=\-/+]+:[A-Za-z0-9.-]+(:\d+)?$/;

/** Turns an event about to be sent into what goes on the wire (crypto.ts: encrypted in an encrypted room). */
export type OutgoingEncryption = (roomId: string, type: string, content: Record<string, unknown>) => Promise<OutgoingEvent>;
/** An event as it is sent. */
export interface OutgoingEvent {
  type: string;
  content: Record<string, unknown>;
}

export class MatrixClient {
  /** Rooms known to be encrypted (encryption, once on, stays on): their id → true. */
  private readonly encryptedRooms = new Map<string, boolean>();
  /** How sends into encrypted rooms are encrypted (or refused); none: every send is as given. */
  encryption?: OutgoingEncryption;

  constructor(
    readonly homeserver: string,
    private readonly accessToken: string,
    private readonly signal?: AbortSignal,
  ) {}

  /** Whether `roomId` has end-to-end encryption turned on (its `m.room.encryption` state). */
  async isEncrypted(roomId: string): Promise<boolean> {
    if (this.encryptedRooms.get(roomId)) return true;
    try {
      await this.call('GET', `/rooms/${encodeURIComponent(roomId)}/state/m.room.encryption/`);
      this.encryptedRooms.set(roomId, true);
      return true;
    } catch (err) {
      if (err instanceof AivyxError && (err.detail as { status?: number } | undefined)?.status === 404) return false;
      throw err;
    }
  }

  private async call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const res = await fetch(`${this.homeserver.replace(/\/$/, '')}/_matrix/client/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${this.accessToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: signal ?? this.signal ?? null,
    });
    const text = await res.text();
    if (!res.ok) {
      const err = (() => {
        try {
          return JSON.parse(text) as { errcode?: string; error?: string };
        } catch {
          return {};
        }
      })();
      throw new AivyxError('Channel', `Matrix ${method} ${path.split('?')[0]} failed: HTTP ${res.status} ${err.errcode ?? ''}`.trim(), {
        detail: { status: res.status, errcode: err.errcode ?? '', retryable: res.status >= 500 || res.status === 429 },
      });
    }
    return JSON.parse(text || '{}') as T;
  }

  /**
   * Uploads `bytes` to the media repository (`/_matrix/media/v3/upload`: uploads were not moved by
   * authenticated media, only downloads); its `mxc://` URI.
   */
  async upload(bytes: Uint8Array, mime: string, filename: string | undefined): Promise<string> {
    const q = filename ? `?${new URLSearchParams({ filename }).toString()}` : '';
    const res = await fetch(`${this.homeserver.replace(/\/$/, '')}/_matrix/media/v3/upload${q}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.accessToken}`, 'content-type': mime },
      body: Buffer.from(bytes),
      signal: this.signal ?? null,
    });
    const answer = (await res.json().catch(() => ({}))) as { content_uri?: string; errcode?: string };
    if (!res.ok || typeof answer.content_uri !== 'string' || !answer.content_uri.startsWith('mxc://'))
      throw new AivyxError('Channel', `Matrix upload failed: HTTP ${res.status} ${answer.errcode ?? ''}`.trim(), {
        detail: { status: res.status, errcode: answer.errcode ?? '', retryable: res.status >= 500 || res.status === 429 },
      });
    return answer.content_uri;
  }

  /** The bot's own user id (checks the token). */
  async whoami(): Promise<string> {
    return (await this.call<{ user_id: string }>('GET', '/account/whoami')).user_id;
  }

  /** The device the access token belongs to (the device whose keys the crypto holds). */
  async deviceId(): Promise<string> {
    const { device_id } = await this.call<{ device_id?: string }>('GET', '/account/whoami');
    if (!device_id) throw new AivyxError('Config', 'the Matrix access token has no device: end-to-end encryption needs one');
    return device_id;
  }

  /** A request the crypto asks for (keys upload, query, claim, to-device): its JSON answer. */
  request(method: string, path: string, body: unknown): Promise<unknown> {
    return this.call(method, path, body);
  }

  /** One long poll: what happened after `since` (the first call, without `since`, only positions the stream). */
  sync(since: string | undefined, timeoutMs: number, signal: AbortSignal): Promise<SyncBatch> {
    const q = new URLSearchParams({ filter: SYNC_FILTER, timeout: String(since ? timeoutMs : 0) });
    if (since) q.set('since', since);
    return this.call('GET', `/sync?${q.toString()}`, undefined, signal);
  }

  /** Sends `content` as an event of `type` into `roomId`, once per `key`; the event id. */
  async send(roomId: string, type: string, content: Record<string, unknown>, key: string): Promise<string> {
    const out = this.encryption ? await this.encryption(roomId, type, content) : { type, content };
    const path = `/rooms/${encodeURIComponent(roomId)}/send/${encodeURIComponent(out.type)}/${txnId(key)}`;
    return (await this.call<{ event_id: string }>('PUT', path, out.content)).event_id;
  }

  /** Sends a text message (a notice: bots' replies are notices), optionally as a reply to `replyTo`. */
  sendText(roomId: string, text: string, key: string, replyTo?: string): Promise<string> {
    return this.send(
      roomId,
      'm.room.message',
      { msgtype: 'm.notice', body: text, ...(replyTo ? { 'm.relates_to': { 'm.in_reply_to': { event_id: replyTo } } } : {}) },
      key,
    );
  }

  /** Replaces the text of the bot's own message `eventId` (`m.replace`); `key` makes a repeat the same edit. */
  editText(roomId: string, eventId: string, text: string, key: string): Promise<string> {
    return this.send(
      roomId,
      'm.room.message',
      {
        msgtype: 'm.notice',
        body: `* ${text}`,
        'm.new_content': { msgtype: 'm.notice', body: text },
        'm.relates_to': { rel_type: 'm.replace', event_id: eventId },
      },
      key,
    );
  }

  /** The users joined to `roomId`, as the homeserver knows them. */
  async joinedMembers(roomId: string): Promise<string[]> {
    const r = await this.call<{ joined: Record<string, unknown> }>('GET', `/rooms/${encodeURIComponent(roomId)}/joined_members`);
    return Object.keys(r.joined);
  }

  /** Joins a room the bot was invited to. */
  async join(roomId: string): Promise<void> {
    await this.call('POST', `/join/${encodeURIComponent(roomId)}`, {});
  }

  /** Creates a private room with `userId` invited (a direct chat); its room id. */
  async createDirectRoom(userId: string): Promise<string> {
    const r = await this.call<{ room_id: string }>('POST', '/createRoom', {
      preset: 'trusted_private_chat',
      is_direct: true,
      invite: [userId],
    });
    return r.room_id;
  }
}
