/**
 * A reply's files on Matrix against a real Synapse: after the reply's text, an `m.image` (or
 * `m.file`) whose media the person's client downloads (authenticated media,
 * `/_matrix/client/v1/media/download`) byte for byte. In an end-to-end encrypted room the event is
 * encrypted and so is the file: the homeserver holds only ciphertext (no `url` in the clear, the
 * stored media is not the file), and the owner's client decrypts it with the key the event carries
 * (AES-256-CTR, SHA-256 checked) to the exact bytes.
 */
import { createDecipheriv, createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as sdk from 'matrix-js-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EncryptedFile } from '../../channels/matrix/files.js';
import { cryptoClient, encryptedDm, pinOf, startE2eeWorld, type E2eeWorld } from '../support/matrix-e2ee-harness.js';
import { Person, until } from '../support/matrix-person.js';
import { synapseAvailable } from '../support/synapse.js';

const FILES = mkdtempSync(join(tmpdir(), 'aivyx-mx-files-'));
// A PNG by its signature (what the type is detected from), then bytes no text could be.
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256)),
]);
const NOTES = 'the notes, in the clear only for their reader\n';
writeFileSync(join(FILES, 'chart.png'), PNG);
writeFileSync(join(FILES, 'notes.txt'), NOTES);
const attach = (file: string) => ({
  steps: [
    { call: [{ tool: 'fs.attach', input: { path: join(FILES, file) } }] },
    { say: 'here it is', sayOnFailure: 'could not: {{results}}' },
  ],
});
const script = {
  rules: [{ match: 'chart', ...attach('chart.png') }, { match: 'notes', ...attach('notes.txt') }, { steps: [{ say: 'ok' }] }],
};

type Ev = { event_id: string; sender: string; type: string; state_key?: string; content: Record<string, unknown> };
let w: E2eeWorld;
let carol: Person;
let owner: sdk.MatrixClient;
let ownerToken = '';

/** The room's events as the homeserver holds them, oldest first (as `token`'s account reads them). */
async function events(token: string, roomId: string): Promise<Ev[]> {
  const res = await fetch(`${w.hs.url}/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages?dir=b&limit=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return ((await res.json()) as { chunk: Ev[] }).chunk.reverse();
}
/** Downloads `mxc` as a signed-in client does (authenticated media). */
async function download(token: string, mxc: string): Promise<Buffer> {
  const [server, id] = mxc.replace(/^mxc:\/\//, '').split('/');
  const res = await fetch(`${w.hs.url}/_matrix/client/v1/media/download/${server}/${id}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}
const fromBot = (evs: Ev[]) => evs.filter((e) => e.sender === w.bot.userId);

const describeMatrix = synapseAvailable() || process.env.CI ? describe : describe.skip;

describeMatrix('Matrix attachments (real Synapse)', () => {
  beforeAll(async () => {
    w = await startE2eeWorld({ script, agent: { tierPolicy: { semiTrusted: { 'fs.read': [`${FILES}/**`] } } } });
    const alice = await w.hs.register('alice');
    ownerToken = alice.accessToken;
    carol = new Person(w.hs, await w.hs.register('carol'));
    owner = await cryptoClient(w.hs, alice);
    await w.start({ allowlist: [alice.userId, carol.id], verifiedDevices: [await pinOf(owner)] });
  }, 240_000);
  afterAll(async () => {
    owner?.stopClient();
    await w?.stop();
  });

  it('sends an image after the reply text, and the person downloads the exact bytes', async () => {
    const dm = await carol.dmWith(w.bot.userId);
    await carol.say(dm, 'chart please');
    await until(
      async () => fromBot(await events(carol.user.accessToken, dm)).some((e) => e.content.msgtype === 'm.image'),
      'the image',
      60_000,
    );
    const mine = fromBot(await events(carol.user.accessToken, dm)).filter((e) => e.type === 'm.room.message');
    const image = mine.find((e) => e.content.msgtype === 'm.image')!;
    // The text first, then the file.
    expect(mine.findIndex((e) => e.content.body === 'here it is')).toBeLessThan(mine.indexOf(image));
    expect(image.content).toMatchObject({ body: 'chart.png', info: { mimetype: 'image/png', size: PNG.length } });
    expect(await download(carol.user.accessToken, image.content.url as string)).toEqual(PNG);

    await carol.say(dm, 'notes please');
    await until(
      async () => fromBot(await events(carol.user.accessToken, dm)).some((e) => e.content.msgtype === 'm.file'),
      'the file',
      60_000,
    );
    const file = fromBot(await events(carol.user.accessToken, dm)).find((e) => e.content.msgtype === 'm.file')!;
    expect(file.content).toMatchObject({ body: 'notes.txt', info: { mimetype: 'text/plain; charset=utf-8' } });
    expect((await download(carol.user.accessToken, file.content.url as string)).toString()).toBe(NOTES);
  });

  it('into an encrypted room only encrypted: the homeserver holds ciphertext; the owner decrypts the exact bytes', async () => {
    const dm = await encryptedDm(owner, w.bot.userId);
    await owner.sendTextMessage(dm, 'chart please');
    const seenImage = () =>
      (owner.getRoom(dm)?.getLiveTimeline().getEvents() ?? []).find(
        (e) => e.getSender() === w.bot.userId && e.getContent<{ msgtype?: string }>().msgtype === 'm.image',
      );
    await until(() => seenImage() !== undefined, 'the encrypted image', 90_000);
    const content = seenImage()!.getContent<{ url?: string; file: EncryptedFile; body: string }>();
    expect(content.body).toBe('chart.png');
    expect(content.url).toBeUndefined();
    // On the homeserver: the bot's messages are encrypted events only, and the media is not the file.
    const wire = fromBot(await events(ownerToken, dm)).filter((e) => e.state_key === undefined);
    expect(wire.length).toBeGreaterThanOrEqual(2);
    expect(wire.map((e) => e.type).filter((t) => t !== 'm.room.encrypted')).toEqual([]);
    const stored = await download(ownerToken, content.file.url);
    expect(stored.includes(PNG.subarray(8, 40))).toBe(false);
    // As the spec has a client read it: the hash, then AES-256-CTR with the event's key and iv.
    expect(createHash('sha256').update(stored).digest('base64').replace(/=+$/, '')).toBe(content.file.hashes.sha256);
    expect(content.file.key).toMatchObject({ kty: 'oct', alg: 'A256CTR', ext: true });
    const decipher = createDecipheriv('aes-256-ctr', Buffer.from(content.file.key.k, 'base64url'), Buffer.from(content.file.iv, 'base64'));
    expect(Buffer.concat([decipher.update(stored), decipher.final()])).toEqual(PNG);
  });
});
