/**
 * `aivyx skills` and `aivyx graph predicates` over the REST channel (issue 35): the owner lists,
 * shows and retires approved skills and extends the predicate vocabulary — through the scopes the
 * tools need (an assistant without skills.propose cannot retire from here either). Real
 * PostgreSQL, real sealed stores, the real REST server and CLI command functions.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerSkillsOf, skillStoreOf } from '../../app/wiring.js';
import { runGraphCommand, runSkillsCommand } from '../../channels/cli/skill-commands.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import type { TurnGateway } from '../../channels/turn-gateway.js';
import type { MasterKey } from '../../infra/crypto/index.js';
import { openDatabase, type Database } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

const token = randomBytes(16).toString('hex');
let pg: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Kysely<Database>;
let close: () => Promise<void>;
let master: MasterKey;
const servers: { url: string; stop(): Promise<void> }[] = [];

/** The CLI's `skills` and `graph` commands against a REST channel whose assistant holds `capabilities`. */
async function cliWith(capabilities: string[]) {
  const server = await startRestServer({
    gateway: {} as TurnGateway,
    token,
    audit: { verify: async () => null, tail: async () => [] },
    skills: ownerSkillsOf(db, master, { capabilities }),
  });
  servers.push(server);
  const target = { url: server.url, token };
  const out = { text: '' };
  return {
    out,
    skills: (...args: string[]) => runSkillsCommand(args, target, (s) => (out.text += s)),
    graph: (...args: string[]) => runGraphCommand(args, target, (s) => (out.text += s)),
  };
}

beforeAll(async () => {
  pg = await createTestDatabase('owner_skills');
  ({ db, close } = await openDatabase({ databaseUrl: pg.url }));
  master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  const store = skillStoreOf(db, master);
  const approval = { missionId: 'mission-confirm-a', gateId: 'mission-confirm-a/gate-1' };
  await store.store(
    {
      name: 'file-receipts',
      summary: 'File the receipts',
      whenToUse: 'receipts arrive',
      steps: ['read them', 'file them'],
      tools: ['fs.read', 'fs.write'],
    },
    { approval, at: Date.UTC(2026, 11, 5) },
  );
  await store.store(
    { name: 'welcome-guests', summary: 'Add whoever mails in', whenToUse: 'mail arrives', steps: ['add them'], tools: [] },
    { approval, at: Date.UTC(2026, 11, 5), untrusted: 'a message from stranger@example.com on email (Untrusted)' },
  );
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  await close?.();
  await pg?.drop();
});

describe('the owner sees and retires what the assistant learned', () => {
  it('lists (with where a proposal came from), shows one whole, retires it', async () => {
    const cli = await cliWith(['skills.propose', 'skills.list', 'skills.invoke', 'graph.read', 'graph.write']);
    expect(await cli.skills('list')).toBe(0);
    expect(cli.out.text).toBe(
      'file-receipts v1  File the receipts\n' +
        'welcome-guests v1  Add whoever mails in  (proposed after untrusted content: a message from stranger@example.com on email (Untrusted))\n',
    );
    cli.out.text = '';
    await cli.skills('show', 'file-receipts');
    expect(cli.out.text).toContain('  1. read them\n  2. file them\n');
    expect(cli.out.text).toContain('tools it expects (it grants none): fs.read fs.write');
    expect(cli.out.text).toContain('approved at gate mission-confirm-a/gate-1');
    await expect(cli.skills('show', 'nope-nope')).rejects.toThrow(/no approved skill named "nope-nope"/);
    cli.out.text = '';
    await cli.skills('retire', 'welcome-guests');
    expect(cli.out.text).toBe('retired (1 version)\n');
    cli.out.text = '';
    await cli.skills('list', '--json');
    expect(JSON.parse(cli.out.text)).toEqual({ skills: [{ name: 'file-receipts', summary: 'File the receipts', version: 1 }] });
  });

  it('needs the scopes the tools need: no back door', async () => {
    const cli = await cliWith(['skills.list']);
    await expect(cli.skills('retire', 'file-receipts')).rejects.toThrow(/retiring a skill needs skills.propose/);
    // An edit is a proposal's authority too (its gate and approval: test/skills/skill-edit.test.ts).
    await expect(cli.skills('edit', 'file-receipts', '--step', 'file them all')).rejects.toThrow(/editing a skill needs skills.propose/);
    await expect(cli.skills('show', 'file-receipts')).rejects.toThrow(/showing a skill needs skills.invoke/);
    await expect(cli.graph('predicates', 'add', 'mentors')).rejects.toThrow(/adding a predicate needs graph.write/);
  });

  it('extends the predicate vocabulary', async () => {
    const cli = await cliWith(['graph.read', 'graph.write']);
    await cli.graph('predicates', 'add', 'mentors');
    cli.out.text = '';
    await cli.graph('predicates');
    expect(cli.out.text.split('\n')).toContain('mentors');
    expect(cli.out.text.split('\n')).toContain('works_on');
    await expect(cli.graph('predicates', 'add', 'Not A Predicate')).rejects.toThrow(/is not a predicate/);
  });
});
