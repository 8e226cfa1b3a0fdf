/**
 * Attachments at rest (infra/attachments.ts) and the `fs.attach` tool over them: sealed bytes,
 * bound to one conversation (anyone else, or a guessed id, finds nothing), one attachment per
 * call however often it is retried, a turn's list not mixed with another turn's, a file over the
 * limit refused with nothing stored; and `aivyx chat`'s saving, which writes nowhere but its folder
 * whatever name a server sends.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsAttachTool } from '../../activities/tools/fs-attach.js';
import { saveAttachments } from '../../channels/cli/attachments.js';
import { createAttachmentStore } from '../../infra/attachments.js';
import { MasterKey } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';
import { toolContext } from '../support/tool-context.js';

const [backend] = openStorageBackends();
const master = new MasterKey(new Uint8Array(32).fill(9));
const dir = mkdtempSync(join(tmpdir(), 'aivyx-attach-store-'));
let s: OpenDatabase;
let store: ReturnType<typeof createAttachmentStore>;

beforeAll(async () => {
  s = await backend!.open();
  store = createAttachmentStore(SealedStorage.open(s.db, master).domain('channel_state'));
});
afterAll(async () => s?.close());

const channel = (sessionId: string) =>
  ({ name: 'telegram', platform: 'Telegram', trustTier: 'SemiTrusted', sessionId, sender: '42' }) as const;
const ref = { name: 'a.txt', mime: 'text/plain; charset=utf-8', size: 5 } as const;

describe('the attachment store', () => {
  it('serves an attachment to its own conversation only; another session, channel or a guessed id finds nothing', async () => {
    const saved = await store.save({ channel: 'rest', sessionId: 's1', turnId: 'turn/rest/1' }, ref, Buffer.from('hello'), 'k/1');
    expect(saved.id).toMatch(/^[0-9a-f]{32}$/);
    expect(Buffer.from((await store.get(saved.id, { channel: 'rest', sessionId: 's1' }))!.bytes).toString()).toBe('hello');
    expect(await store.get(saved.id, { channel: 'rest', sessionId: 's2' })).toBeUndefined();
    expect(await store.get(saved.id, { channel: 'cli', sessionId: 's1' })).toBeUndefined();
    expect(await store.get('0'.repeat(32), { channel: 'rest', sessionId: 's1' })).toBeUndefined();
    expect(await store.get('../meta/x', { channel: 'rest', sessionId: 's1' })).toBeUndefined();
  });

  it('stores once per call: a retried call gets the same handle, and its turn lists it once', async () => {
    const binding = { channel: 'rest', sessionId: 's1', turnId: 'turn/rest/2' };
    const first = await store.save(binding, ref, Buffer.from('hello'), 'k/2');
    const again = await store.save(binding, ref, Buffer.from('hello'), 'k/2');
    expect(again).toEqual(first);
    expect((await store.forTurn('turn/rest/2', 'rest')).map((r) => r.id)).toEqual([first.id]);
  });

  it("keeps a turn's list apart from a turn whose id it prefixes, and from other channels", async () => {
    const a = await store.save({ channel: 'rest', sessionId: 's', turnId: 'm/step-0' }, ref, Buffer.from('a'), 'k/3');
    await store.save({ channel: 'rest', sessionId: 's', turnId: 'm/step-0/run-2' }, ref, Buffer.from('b'), 'k/4');
    expect((await store.forTurn('m/step-0', 'rest')).map((r) => r.id)).toEqual([a.id]);
    expect(await store.forTurn('m/step-0', 'telegram')).toEqual([]);
  });

  it('holds no plaintext at rest', async () => {
    await store.save({ channel: 'rest', sessionId: 's', turnId: 'turn/rest/5' }, ref, Buffer.from('PLAINTEXT-MARKER'), 'k/5');
    const rows = await sql<{
      key: string;
      ciphertext: Uint8Array;
    }>`select key, ciphertext from sealed_records where key like 'attachment/%'`.execute(s.db);
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const r of rows.rows) expect(Buffer.from(r.ciphertext).includes('PLAINTEXT-MARKER'), r.key).toBe(false);
  });
});

describe('forgetting attachments', () => {
  const rowsOf = async (id: string, callKey: string) => {
    const call = `attachment/call/${createHash('sha256').update(callKey).digest('hex')}`;
    const rows = await sql<{ key: string }>`select key from sealed_records
      where domain = 'channel_state' and (key like ${`%${id}%`} or key = ${call})`.execute(s.db);
    return rows.rows.map((r) => r.key).sort();
  };

  it('serves an expired attachment to nobody, and the sweep deletes its bytes, meta, turn entry and call key', async () => {
    let clock = Date.UTC(2030, 0, 1);
    const timed = createAttachmentStore(SealedStorage.open(s.db, master).domain('channel_state'), { ttlMs: 3_600_000, now: () => clock });
    const owner = { channel: 'rest', sessionId: 'ttl' };
    const old = await timed.save({ ...owner, turnId: 'turn/rest/ttl-1' }, ref, Buffer.from('old'), 'k/ttl-1');
    clock += 1_800_000;
    const fresh = await timed.save({ ...owner, turnId: 'turn/rest/ttl-2' }, ref, Buffer.from('new'), 'k/ttl-2');
    expect(await rowsOf(old.id, 'k/ttl-1')).toHaveLength(4);

    clock += 1_800_001; // the first is an hour and a moment old, the second half an hour
    expect(await timed.get(old.id, owner)).toBeUndefined();
    expect(await timed.forTurn('turn/rest/ttl-1', 'rest')).toEqual([]);
    expect(await rowsOf(old.id, 'k/ttl-1')).toHaveLength(4); // not served, not yet deleted

    expect(await timed.sweep()).toBeGreaterThanOrEqual(1);
    expect(await rowsOf(old.id, 'k/ttl-1')).toEqual([]);
    expect(Buffer.from((await timed.get(fresh.id, owner))!.bytes).toString()).toBe('new');
    expect(await rowsOf(fresh.id, 'k/ttl-2')).toHaveLength(4);
    // A retried call of the swept one stores the file anew rather than pointing at nothing.
    const again = await timed.save({ ...owner, turnId: 'turn/rest/ttl-1' }, ref, Buffer.from('old'), 'k/ttl-1');
    expect(again.id).not.toBe(old.id);
  });

  it("forgets one channel's session's attachments (/clear), and no other session's or channel's", async () => {
    const mine = await store.save({ channel: 'cli', sessionId: 'c1', turnId: 'turn/cli/c1' }, ref, Buffer.from('mine'), 'k/c1');
    const otherSession = await store.save({ channel: 'cli', sessionId: 'c2', turnId: 'turn/cli/c2' }, ref, Buffer.from('x'), 'k/c2');
    const otherChannel = await store.save({ channel: 'rest', sessionId: 'c1', turnId: 'turn/rest/c1' }, ref, Buffer.from('y'), 'k/c3');
    expect(await store.forgetSession('cli', 'c1')).toBe(1);
    expect(await rowsOf(mine.id, 'k/c1')).toEqual([]);
    expect(await store.get(mine.id, { channel: 'cli', sessionId: 'c1' })).toBeUndefined();
    expect(await store.get(otherSession.id, { channel: 'cli', sessionId: 'c2' })).toBeDefined();
    expect(await store.get(otherChannel.id, { channel: 'rest', sessionId: 'c1' })).toBeDefined();
  });
});

describe('fs.attach', () => {
  // The store opens in beforeAll: the tool reaches it through this.
  const tool = createFsAttachTool({ store: { save: (...args) => store.save(...args) }, maxBytes: 64 });
  const held = [`fs.read:${dir}/**`];

  it('attaches a file within the limit for the turn’s conversation, typed by its content', async () => {
    writeFileSync(join(dir, 'pic.txt'), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2]));
    const ctx = toolContext({ held, channel: channel('chat-1'), turnId: 'turn/telegram/9' });
    const r = await tool.run({ path: join(dir, 'pic.txt') }, ctx);
    expect(r).toMatchObject({ kind: 'completed', attachment: { name: 'pic.txt.jpg', mime: 'image/jpeg', size: 6 } });
    const [listed] = await store.forTurn('turn/telegram/9', 'telegram');
    expect(listed).toMatchObject({ name: 'pic.txt.jpg', sessionId: 'chat-1' });
  });

  it('refuses a file over the limit, clearly, and stores nothing', async () => {
    writeFileSync(join(dir, 'big.txt'), 'x'.repeat(65));
    const ctx = toolContext({ held, channel: channel('chat-2'), turnId: 'turn/telegram/10' });
    await expect(tool.run({ path: join(dir, 'big.txt') }, ctx)).rejects.toThrow(/larger than the attachment limit of 64 bytes/);
    expect(await store.forTurn('turn/telegram/10', 'telegram')).toEqual([]);
  });

  it('checks the real path against the grants: a symlink out of the granted folder is refused', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'aivyx-attach-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    symlinkSync(join(outside, 'secret.txt'), join(dir, 'link.txt'));
    const ctx = toolContext({ held, channel: channel('chat-3'), turnId: 'turn/telegram/11' });
    const refused = await tool.run({ path: join(dir, 'link.txt') }, ctx).catch((e: unknown) => e);
    expect(refused).toMatchObject({ kind: 'CapabilityDenied' });
    expect(await tool.resolveScope({ path: join(dir, 'link.txt') })).toBe(`fs.read:${join(outside, 'secret.txt')}`);
  });
});

describe('aivyx chat saving attachments', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('payload'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('writes only inside its folder, whatever name the server sends, and never over a file', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'aivyx-downloads-'));
    const folder = join(parent, 'downloads');
    const hostile = ['../../x', '/etc/passwd', '..', '.profile', '<script>.html', 'ok.txt', 'ok.txt'].map((name, i) => ({
      id: String(i).padStart(32, '0'),
      name,
      mime: 'text/plain; charset=utf-8' as const,
      size: 7,
      session: 's',
    }));
    const paths = await saveAttachments({ url, token: 't' }, hostile, folder);
    expect(paths.map((p) => p.slice(folder.length + 1))).toEqual([
      'x',
      'passwd',
      'attachment',
      'profile',
      '_script_.html.txt',
      'ok.txt',
      'ok (1).txt',
    ]);
    expect(readdirSync(parent)).toEqual(['downloads']);
    for (const p of paths) expect(readFileSync(p, 'utf8')).toBe('payload');
  });
});
