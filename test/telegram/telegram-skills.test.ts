/**
 * `/skills`, `/skill` and `/retire` on Telegram (issue 35: the owner lists, shows and retires skills
 * from the CLI, REST and Telegram). Only the owner (`AIVYX_OWNER_IDS` telegram:<id>), only in a
 * private chat; an allowlisted non-owner and the owner in a group are refused and change nothing.
 * grammY over real HTTP against our Bot API emulator (the only proof of the Telegram side), the real
 * sealed skill store on a fresh PostgreSQL database.
 */
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { ownerSkillsOf, skillStoreOf } from '../../app/wiring.js';
import type { ChatTurnPort } from '../../channels/ports.js';
import { startTelegramChannel, type TelegramChannel } from '../../channels/telegram/index.js';
import { openDatabase } from '../../infra/db/index.js';
import { auditEntriesForTurn } from '../../infra/audit/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { replyTo, startBotApiEmulator, type BotApiEmulator, type TgUser, QUICK_POLLING } from '../support/bot-api-emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

const ALICE = { id: 4242, first_name: 'Alice' };
const MALLORY = { id: 6666, first_name: 'Mallory' };
const SKILL = {
  name: 'file-receipts',
  summary: 'File receipts into the monthly ledger',
  whenToUse: 'a receipt arrives',
  steps: ['read the receipt', 'append it to the month'],
  tools: ['fs.read', 'fs.write'],
};

let tg: BotApiEmulator;
let channel: TelegramChannel;
let pg: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Awaited<ReturnType<typeof openDatabase>>;
let skills: ReturnType<typeof skillStoreOf>;

beforeAll(async () => {
  pg = await createTestDatabase();
  db = await openDatabase({ databaseUrl: pg.url });
  const master = await openKeyring(db.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  skills = skillStoreOf(db.db, master);
  await skills.store(SKILL, { approval: { missionId: 'mission-1', gateId: 'mission-1/gate-1' }, at: Date.now() });
  tg = await startBotApiEmulator(`${randomInt(100_000, 999_999)}:TEST-token`);
  channel = await startTelegramChannel({
    token: tg.token,
    apiRoot: tg.apiRoot,
    // No turn runs here: the commands answer by themselves.
    gateway: {} as ChatTurnPort,
    deliveries: new DeliveryRegistry(),
    storage: SealedStorage.open(db.db, master).domain('channel_state'),
    allowlist: [ALICE.id, MALLORY.id],
    owner: {
      ids: [`telegram:${ALICE.id}`],
      skills: ownerSkillsOf(db.db, master, { capabilities: ['skills.list', 'skills.invoke', 'skills.propose'] }),
    },
    ...QUICK_POLLING,
  });
}, 120_000);

afterAll(async () => {
  await channel?.stop();
  await tg?.close();
  await db?.close();
  await pg?.drop();
});

const command = (user: TgUser, text: string, chat?: { id: number; type: 'group' }): Promise<string> => replyTo(tg, user, text, chat);

describe('the owner’s skills on Telegram', () => {
  it('a non-owner and the owner in a group are refused and retire nothing', async () => {
    expect(await command(MALLORY, '/skills')).toBe('Only the owner manages skills.');
    expect(await command(MALLORY, '/retire file-receipts')).toBe('Only the owner manages skills.');
    expect(await command(ALICE, '/skills', { id: -100123, type: 'group' })).toBe('Ask me about skills in a private chat.');
    expect((await skills.list()).map((s) => s.name)).toEqual(['file-receipts']);
  });

  it('the owner lists, shows and retires a skill; a bad name gets a clear answer', async () => {
    expect(await command(ALICE, '/skills')).toContain('• file-receipts (v1) — File receipts into the monthly ledger');
    const shown = await command(ALICE, '/skill file-receipts');
    expect(shown).toContain('file-receipts v1: File receipts into the monthly ledger');
    expect(shown).toContain('1. read the receipt\n2. append it to the month');
    expect(shown).toContain('Tools it expects (it grants none): fs.read, fs.write');
    expect(await command(ALICE, '/skill no such')).toMatch(/"no such" is not a skill name/);
    expect(await command(ALICE, '/retire file-receipts')).toBe('Retired file-receipts (1 version(s)).');
    expect(await skills.list()).toEqual([]);
    // The change is recorded: who, where, which skill (an identifier, no text).
    expect((await auditEntriesForTurn(db.db, 'owner/skills')).map((r) => r.event)).toEqual([
      {
        type: 'OwnerSkillsChanged',
        turnId: 'owner/skills',
        action: 'retire',
        subject: 'file-receipts',
        versions: 1,
        by: String(ALICE.id),
        channel: 'telegram',
      },
    ]);
    expect(await command(ALICE, '/skills')).toBe('No approved skills yet.');
  });
});
