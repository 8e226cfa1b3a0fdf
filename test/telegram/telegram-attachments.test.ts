/**
 * Attachments on Telegram (`fs.attach`): a turn's image arrives by sendPhoto, any other file by
 * sendDocument (multipart uploads to the Bot API emulator), after the reply text; a file over the
 * limit is refused with a clear reason and nothing is uploaded; the bytes at rest are sealed.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { startTelegramChannel, telegramMessageId, type TelegramChannel } from '../../channels/telegram/index.js';
import { SealedStorage, type DomainHandle } from '../../infra/storage/index.js';
import { turnWorkflowId } from '../../workflows/turn-ids.js';
import { startBotApiEmulator, type BotApiEmulator } from '../support/bot-api-emulator.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-tg-files-'));
// A PNG signature and a few bytes: the type is read from the content, the name says HTML.
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR-chart-pixels')]);
const NOTES = 'MARKER-notes-in-plain-text\nsecond line\n';
writeFileSync(join(dir, 'chart<script>.html'), PNG);
writeFileSync(join(dir, 'notes.txt'), NOTES);
writeFileSync(join(dir, 'big.txt'), 'x'.repeat(4096));
const LIMIT = 1024;

const attach = (file: string) => ({
  steps: [
    { call: [{ tool: 'fs.attach', input: { path: join(dir, file) } }] },
    { say: 'here: {{results}}', sayOnFailure: 'could not: {{results}}' },
  ],
});
const script = {
  rules: [
    { match: 'chart', ...attach('chart<script>.html') },
    { match: 'notes', ...attach('notes.txt') },
    { match: 'big', ...attach('big.txt') },
  ],
};

let h: Harness;
let state: DomainHandle;
let tg: BotApiEmulator;
let channel: TelegramChannel | undefined;
const ALICE = { id: 4343, first_name: 'Alice' };

beforeAll(async () => {
  h = await startHarness({
    llm: createScriptedProvider(script),
    agent: { tierPolicy: { semiTrusted: { 'fs.read': [`${dir}/**`] } } },
    attachmentMaxBytes: LIMIT,
  });
  state = SealedStorage.open(h.db, h.master).domain('channel_state');
});
afterEach(async () => {
  await channel?.stop();
  await tg?.close();
});
afterAll(async () => h?.stop());

async function start(): Promise<void> {
  tg = await startBotApiEmulator(`${randomInt(100_000, 999_999)}:TEST-token`);
  channel = await startTelegramChannel({
    token: tg.token,
    apiRoot: tg.apiRoot,
    gateway: h.gateway,
    deliveries: h.deliveries,
    storage: state,
    allowlist: [ALICE.id],
    mode: 'polling',
    pollTimeoutSeconds: 1,
    editIntervalMs: 150,
    log: () => undefined,
  });
}

/** Sends `text` as Alice and waits until her reply is delivered. */
async function ask(text: string): Promise<string> {
  const u = tg.textUpdate(ALICE, text);
  const m = u.message as { chat: { id: number }; message_id: number };
  const turnId = turnWorkflowId('telegram', telegramMessageId(Number(tg.token.split(':')[0]), m.chat.id, m.message_id));
  const until = Date.now() + 45_000;
  while ((await state.getJson<{ delivered?: boolean }>(`turn/${turnId}`))?.delivered !== true) {
    if (Date.now() > until) throw new Error(`reply to ${turnId} not delivered`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return turnId;
}

describe('Telegram attachments', () => {
  it('sends an image as a photo, under a name that fits its content, after the reply', async () => {
    await start();
    await ask('send me the chart');
    expect(tg.uploads).toHaveLength(1);
    const [photo] = tg.uploads;
    expect(photo).toMatchObject({ method: 'sendPhoto', chatId: ALICE.id });
    expect(Buffer.compare(photo!.bytes, PNG)).toBe(0);
    // No markup and no active extension survive: `<script>` became `_script_`, and a PNG ends .png.
    expect(photo!.fileName).toBe('chart_script_.html.png');
    const replies = [...tg.sent.values()].filter((m) => m.chatId === ALICE.id);
    expect(replies.some((m) => m.messageId < photo!.messageId && /here/.test(m.text))).toBe(true);
  });

  it('sends any other file as a document; the bytes at rest are sealed, not plaintext', async () => {
    await start();
    await ask('send me the notes');
    expect(tg.uploads.map((u) => [u.method, u.fileName, u.bytes.toString('utf8')])).toEqual([['sendDocument', 'notes.txt', NOTES]]);
    const rows = await sql<{ ciphertext: Uint8Array }>`select ciphertext from sealed_records where key like 'attachment/%'`.execute(h.db);
    expect(rows.rows.length).toBeGreaterThan(0);
    for (const r of rows.rows) expect(Buffer.from(r.ciphertext).includes('MARKER-notes')).toBe(false);
  });

  it('sends an image Telegram refuses as a photo as a document instead', async () => {
    await start();
    tg.failNext('sendPhoto', { status: 400, description: 'Bad Request: PHOTO_INVALID_DIMENSIONS' });
    await ask('send me the chart');
    expect(tg.uploads.map((u) => [u.method, u.fileName])).toEqual([['sendDocument', 'chart_script_.html.png']]);
  });

  it('refuses a file over the limit with a clear reason, and uploads nothing', async () => {
    await start();
    await ask('send me the big file');
    expect(tg.uploads).toHaveLength(0);
    const text = [...tg.sent.values()].map((m) => m.text).join('\n');
    expect(text).toMatch(/larger than the attachment limit of 1024 bytes/);
  });
});
