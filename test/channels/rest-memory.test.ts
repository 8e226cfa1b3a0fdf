/**
 * `aivyx memory` over the REST channel (issue "the everyday conversation"): the owner lists, shows
 * and forgets what the assistant remembers — through the same scopes as the memory tools (an
 * assistant without memory.forget cannot forget from here either) and with the same `MemoryAccess`
 * audit entries, which never hold the remembered text. Real PostgreSQL, a real sealed store.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStoreOf, ownerMemoryOf } from '../../app/wiring.js';
import { runMemoryCommand } from '../../channels/cli/memory-commands.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import type { TurnGateway } from '../../channels/turn-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { tailAuditEntries } from '../../infra/audit/index.js';
import type { MasterKey } from '../../infra/crypto/index.js';
import { openDatabase, type Database } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked field by field below
type Json = any;
const token = randomBytes(16).toString('hex');
let pg: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Kysely<Database>;
let close: () => Promise<void>;
let master: MasterKey;
const servers: { url: string; stop(): Promise<void> }[] = [];

/** A REST channel whose assistant holds `capabilities`. */
async function restWith(
  capabilities: string[],
): Promise<(method: 'GET' | 'POST', path: string) => Promise<{ status: number; json: Json }>> {
  const server = await startRestServer({
    gateway: {} as TurnGateway,
    token,
    audit: { verify: async () => null, tail: async () => [] },
    memory: ownerMemoryOf(db, master, { capabilities }),
  });
  servers.push(server);
  return async (method, path) => {
    const res = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, json: await res.json() };
  };
}

let ids: string[] = [];

beforeAll(async () => {
  pg = await createTestDatabase('rest_memory');
  ({ db, close } = await openDatabase({ databaseUrl: pg.url }));
  master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  const store = memoryStoreOf(db, master);
  const notes = ['the dentist is on Tuesday at 9', 'the wifi password lives in the blue notebook', 'Bob prefers tea'];
  ids = notes.map((_, i) => store.idFor(`seed/${i}`));
  for (const [i, text] of notes.entries()) await store.write({ text, topic: 'home' }, { id: ids[i]!, at: Date.now() + i });
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  await close?.();
  await pg?.drop();
});

const memoryEntries = async (): Promise<Extract<AuditEvent, { type: 'MemoryAccess' }>[]> =>
  (await tailAuditEntries(db, 100))
    .map((r) => r.event)
    .filter((e): e is Extract<AuditEvent, { type: 'MemoryAccess' }> => e.type === 'MemoryAccess');

describe('the owner sees and forgets what the assistant remembers', () => {
  it('list (all, and by words), show, forget: each audited as MemoryAccess, never with the text', async () => {
    const call = await restWith(['memory.read', 'memory.write', 'memory.forget']);
    const all = await call('GET', '/v1/memory');
    expect(all.status).toBe(200);
    expect(all.json.entries.map((e: { text: string }) => e.text).sort()).toEqual([
      'Bob prefers tea',
      'the dentist is on Tuesday at 9',
      'the wifi password lives in the blue notebook',
    ]);
    const dentist = await call('GET', '/v1/memory?query=dentist');
    expect(dentist.json.entries.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect((await call('GET', `/v1/memory/${ids[2]}`)).json).toMatchObject({ id: ids[2], text: 'Bob prefers tea', topic: 'home' });

    expect((await call('POST', `/v1/memory/${ids[2]}/forget`)).json).toEqual({ forgotten: 1 });
    const gone = await call('GET', `/v1/memory/${ids[2]}`);
    expect(gone.status).toBe(404);
    expect(gone.json.error.message).toBe(`no memory ${ids[2]}`);

    const audited = await memoryEntries();
    expect(audited.map((e) => [e.operation, e.scope])).toEqual([
      ['Read', 'memory.read'],
      ['Read', 'memory.read'],
      ['Read', 'memory.read'],
      ['Forget', 'memory.forget'],
      ['Read', 'memory.read'],
    ]);
    expect(audited[3]!.queryOrKey).toBe(ids[2]);
    const raw = JSON.stringify(audited);
    for (const word of ['dentist', 'Bob', 'tea']) expect(raw).not.toContain(word);
  });

  it('no back door: an assistant without memory.forget cannot forget from here either, and a bad limit is refused', async () => {
    const call = await restWith(['memory.read']);
    const refused = await call('POST', `/v1/memory/${ids[0]}/forget`);
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatchObject({ kind: 'CapabilityDenied', message: expect.stringContaining('memory.forget') });
    expect((await call('GET', `/v1/memory/${ids[0]}`)).status).toBe(200);
    const bad = await call('GET', '/v1/memory?limit=lots');
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/memory\.recall: "limit"/);
  });

  it('aivyx memory show and forget take the start of an id, like git; a start several ids share is refused, listing them', async () => {
    const server = await startRestServer({
      gateway: {} as TurnGateway,
      token,
      audit: { verify: async () => null, tail: async () => [] },
      memory: ownerMemoryOf(db, master, { capabilities: ['memory.read', 'memory.forget'] }),
    });
    servers.push(server);
    const target = { url: server.url, token };
    let out = '';
    const run = (...args: string[]) => runMemoryCommand(args, target, (s) => (out += s));
    // The first two entries are still there (the first test forgot the third); `m_` is left out.
    expect(await run('show', ids[0]!.slice(2, 10))).toBe(0);
    expect(out).toContain(`${ids[0]!}  `);
    expect(out).toContain('the dentist is on Tuesday at 9');
    await expect(run('show', 'm_')).rejects.toThrow(
      new RegExp(`"m_" matches 2 memory entry ids:\\n {2}(${ids[0]!}|${ids[1]!})\\n {2}(${ids[0]!}|${ids[1]!})`),
    );
    out = '';
    expect(await run('forget', ids[1]!.slice(0, 12))).toBe(0);
    expect(out).toBe('forgotten\n');
  });
});
