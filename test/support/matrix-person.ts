/**
 * People on the test Synapse as the Matrix tests drive them: a `Person` creates rooms, says things,
 * reacts, edits, and reads a room back with edits folded in.
 */
import { MatrixClient } from '../../channels/matrix/client.js';
import type { Synapse, SynapseUser } from './synapse.js';

/** One message of a room as a person sees it: its latest text (edits applied) and how often it was edited. */
export interface Seen {
  eventId: string;
  sender: string;
  body: string;
  edits: number;
  replyTo?: string;
}

/** A person's Matrix client, as a test drives it (plain HTTP: what any Matrix client sends). */
export class Person {
  readonly api: MatrixClient;
  private n = 0;
  constructor(
    readonly hs: Synapse,
    readonly user: SynapseUser,
  ) {
    this.api = new MatrixClient(hs.url, user.accessToken);
  }
  get id(): string {
    return this.user.userId;
  }
  private async raw<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.hs.url}/_matrix/client/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${this.user.accessToken}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }
  /** A room with the bot and `others` (all invited; the bot joins on its own, the others are made to). */
  async group(bot: string, others: Person[]): Promise<string> {
    const { room_id } = await this.raw<{ room_id: string }>('POST', '/createRoom', {
      preset: 'private_chat',
      invite: [bot, ...others.map((o) => o.id)],
    });
    for (const o of others) await o.join(room_id);
    await until(async () => (await this.api.joinedMembers(room_id)).includes(bot), 'the bot joins');
    return room_id;
  }
  /** A private room with the bot (invited; it joins on its own). */
  async dmWith(bot: string): Promise<string> {
    const { room_id } = await this.raw<{ room_id: string }>('POST', '/createRoom', {
      preset: 'trusted_private_chat',
      is_direct: true,
      invite: [bot],
    });
    await until(async () => (await this.api.joinedMembers(room_id)).includes(bot), 'the bot joins');
    return room_id;
  }
  say(roomId: string, text: string): Promise<string> {
    return this.api.send(roomId, 'm.room.message', { msgtype: 'm.text', body: text }, `${this.id}/${Date.now()}/${this.n++}`);
  }
  react(roomId: string, eventId: string, key: string): Promise<string> {
    return this.api.send(
      roomId,
      'm.reaction',
      { 'm.relates_to': { rel_type: 'm.annotation', event_id: eventId, key } },
      `${this.id}/r/${this.n++}`,
    );
  }
  edit(roomId: string, eventId: string, text: string): Promise<string> {
    return this.api.send(
      roomId,
      'm.room.message',
      {
        msgtype: 'm.text',
        body: `* ${text}`,
        'm.new_content': { msgtype: 'm.text', body: text },
        'm.relates_to': { rel_type: 'm.replace', event_id: eventId },
      },
      `${this.id}/e/${this.n++}`,
    );
  }
  async setDisplayName(name: string): Promise<void> {
    await this.raw('PUT', `/profile/${encodeURIComponent(this.id)}/displayname`, { displayname: name });
  }
  async invite(roomId: string, userId: string): Promise<void> {
    await this.raw('POST', `/rooms/${encodeURIComponent(roomId)}/invite`, { user_id: userId });
  }
  async join(roomId: string): Promise<void> {
    await this.api.join(roomId);
  }
  /** Rooms this person is invited to. */
  async invites(): Promise<string[]> {
    // A filter of its own per call: Synapse answers a repeated initial sync from a cache for minutes.
    const filter = encodeURIComponent(JSON.stringify({ room: { timeline: { limit: 1 + (this.n++ % 50) } } }));
    const r = await this.raw<{ rooms?: { invite?: Record<string, unknown> } }>('GET', `/sync?timeout=0&filter=${filter}`);
    return Object.keys(r.rooms?.invite ?? {});
  }
  async leave(roomId: string): Promise<void> {
    await this.raw('POST', `/rooms/${encodeURIComponent(roomId)}/leave`, {});
  }
  /** The room's messages (oldest first), edits folded into the messages they replace. */
  async room(roomId: string): Promise<Seen[]> {
    type Rel = { rel_type?: string; event_id?: string; 'm.in_reply_to'?: { event_id?: string } };
    type Content = { body?: string; 'm.relates_to'?: Rel; 'm.new_content'?: { body?: string } };
    type Ev = { event_id: string; sender: string; type: string; content: Content };
    const { chunk } = await this.raw<{ chunk: Ev[] }>('GET', `/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=500`);
    const seen = new Map<string, Seen>();
    for (const ev of chunk.reverse()) {
      if (ev.type !== 'm.room.message') continue;
      const rel = ev.content['m.relates_to'];
      if (rel?.rel_type === 'm.replace') {
        const m = seen.get(rel.event_id ?? '');
        if (m) Object.assign(m, { body: ev.content['m.new_content']?.body ?? '', edits: m.edits + 1 });
        continue;
      }
      seen.set(ev.event_id, {
        eventId: ev.event_id,
        sender: ev.sender,
        body: ev.content.body ?? '',
        edits: 0,
        ...(rel?.['m.in_reply_to']?.event_id ? { replyTo: rel['m.in_reply_to'].event_id } : {}),
      });
    }
    return [...seen.values()];
  }
}

/** Polls `check` until it holds (a test's deadline, not an assertion on time). */
export async function until(check: () => Promise<boolean> | boolean, what: string, ms = 45_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}
