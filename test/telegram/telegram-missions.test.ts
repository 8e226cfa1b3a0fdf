/**
 * `/missions` on Telegram: an allowlisted user lists the missions that name them (id, state) with a
 * Cancel button under each running one, and their recurring missions with Resume / Pause; only they
 * can press them. Another user pressing one (a forwarded message, a copied callback), a made-up
 * callback, a press after use, a stranger asking, or asking in a group is refused and changes
 * nothing; the owner's presses cancel the mission and resume / pause the schedule. grammY over real
 * HTTP against the Bot API emulator, a real worker on the shared dev server with the payload codec,
 * real PostgreSQL.
 */
import { randomInt, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { startTelegramChannel, type TelegramChannel } from '../../channels/telegram/index.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import { openKeyring } from '../../infra/keyring.js';
import { SealedStorage } from '../../infra/storage/index.js';
import type { MissionResult } from '../../workflows/mission-messages.js';
import { startBotApiEmulator, type BotApiEmulator, type SentMessage, type TgUser, QUICK_POLLING } from '../support/bot-api-emulator.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

const ALICE = { id: 4242, first_name: 'Alice' };
const MALLORY = { id: 6666, first_name: 'Mallory' };
const STRANGER = { id: 7777, first_name: 'Stranger' };

let tc: TestConnection;
let mh: MissionHarness;
let missions: MissionGateway;
let tg: BotApiEmulator;
let channel: TelegramChannel;
const ids = { alice: '', mallory: '' };
const schedules = { alice: '', mallory: '' };

beforeAll(async () => {
  tc = await testConnection();
  mh = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    { script: { rules: [{ steps: [{ say: 'ok' }] }] }, codec: { connection: tc.client.connection } },
  );
  const master = await openKeyring(mh.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  // As aivyx up does: the mission gateway (over the codec client) is the channel's missions and its mission control.
  missions = new MissionGateway({ client: mh.client!, taskQueue: mh.taskQueue, attestor: mh.attestor, capabilities: [], dashboard: true });
  const wait = [{ wait: '1h' }];
  ids.alice = (await missions.create({ goal: 'renew the passport', steps: wait, approvers: [`telegram:${ALICE.id}`] })).missionId;
  ids.mallory = (await missions.create({ goal: 'mallory plans', steps: wait, approvers: [`telegram:${MALLORY.id}`] })).missionId;
  for (const id of Object.values(ids)) await listed(id);
  // Recurring missions (paused from the start: no run is due during the test).
  const daily = { steps: [{ notify: 'daily' }], schedule: { every: '1d', paused: true } };
  schedules.alice = (await missions.schedule({ goal: 'daily digest', ...daily, approvers: [`telegram:${ALICE.id}`] })).scheduleId;
  schedules.mallory = (await missions.schedule({ goal: 'mallory daily', ...daily, approvers: [`telegram:${MALLORY.id}`] })).scheduleId;
  for (const id of Object.values(schedules)) await scheduleListed(id);
  tg = await startBotApiEmulator(`${randomInt(100_000, 999_999)}:TEST-token`);
  channel = await startTelegramChannel({
    token: tg.token,
    apiRoot: tg.apiRoot,
    gateway: new TurnGateway({ client: mh.client!, taskQueue: mh.taskQueue, attestor: mh.attestor, hub: mh.hub }),
    deliveries: new DeliveryRegistry(),
    missions,
    missionControl: missions,
    storage: SealedStorage.open(mh.db, master).domain('channel_state'),
    allowlist: [ALICE.id, MALLORY.id],
    ...QUICK_POLLING,
  });
}, 120_000);

afterAll(async () => {
  await channel?.stop();
  await tg?.close();
  for (const id of Object.values(ids))
    await mh?.client?.workflow
      .getHandle(id)
      .terminate('test over')
      .catch(() => undefined);
  for (const id of Object.values(schedules))
    await mh?.client?.schedule
      .getHandle(id)
      .delete()
      .catch(() => undefined);
  await mh?.stop();
});

/** Polls visibility (eventually consistent) until it lists `workflowId` with its dashboard state. */
async function listed(workflowId: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for await (const wf of mh.client!.workflow.list({ query: `WorkflowId = '${workflowId}' AND AivyxMissionState IS NOT NULL` }))
      if (wf.workflowId === workflowId) return;
    if (Date.now() > until) throw new Error(`${workflowId} not listed within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Polls the schedule list (eventually consistent) until it holds `scheduleId`. */
async function scheduleListed(scheduleId: string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    for await (const s of mh.client!.schedule.list()) if (s.scheduleId === scheduleId) return;
    if (Date.now() > until) throw new Error(`${scheduleId} not listed within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const paused = async (id: string): Promise<boolean> => (await mh.client!.schedule.getHandle(id).describe()).state.paused;

const messagesTo = (chatId: number): SentMessage[] => [...tg.sent.values()].filter((m) => m.chatId === chatId);

/** Sends `text` as `user` (in `chat`, default their private chat) and returns the bot's first reply there. */
async function command(user: TgUser, text: string, chat?: { id: number; type: 'group' }): Promise<SentMessage> {
  const chatId = chat?.id ?? user.id;
  const before = messagesTo(chatId).length;
  tg.textUpdate(user, text, chat);
  await tg.waitFor(() => messagesTo(chatId).length > before, 20_000, `reply to ${text}`);
  return messagesTo(chatId)[before]!;
}

async function press(user: TgUser, m: SentMessage, data: string): Promise<string> {
  const id = (tg.pressButton(user, m, data).callback_query as { id: string }).id;
  await tg.waitFor(() => tg.answersTo(id).length > 0, 20_000, 'callback answered');
  return tg.answersTo(id)[0]!;
}

const status = async (id: string): Promise<string> => (await mh.client!.workflow.getHandle(id).describe()).status.name;

describe('/missions on Telegram', () => {
  it('lists only the sender’s missions and schedules; only they can press Cancel / Resume / Pause, and those act', async () => {
    const list = await command(ALICE, '/missions');
    expect(list.text).toContain('Your missions:');
    expect(list.text).toContain('renew the passport');
    expect(list.text).toMatch(new RegExp(`${ids.alice} — (waiting|running)`));
    expect(list.text).not.toContain(ids.mallory);
    expect(list.text).not.toContain('mallory plans');
    expect(list.text).toContain(`Your recurring missions:\n• daily digest\n  ${schedules.alice} — paused`);
    expect(list.text).not.toContain(schedules.mallory);
    const buttons = list.replyMarkup!.inline_keyboard.flat();
    expect(buttons.map((b) => b.text)).toEqual(['Cancel: renew the passport', 'Resume: daily digest']);
    const data = buttons[0]!.callback_data!;
    const resume = buttons[1]!.callback_data!;
    expect(data).toMatch(/^mc:[A-Za-z0-9_-]{22}$/);
    expect(data).not.toContain(ids.alice);

    // Mallory (allowlisted too) sees only hers; pressing Alice's button (forwarded to her) is refused.
    const mallorys = await command(MALLORY, '/missions');
    expect(mallorys.text).toContain(ids.mallory);
    expect(mallorys.text).not.toContain(ids.alice);
    expect(await press(MALLORY, list, data)).toBe('Refused: this button is for someone else.');
    // A made-up handle names nothing.
    expect(await press(MALLORY, list, `mc:${randomBytes(16).toString('base64url')}`)).toMatch(/^Refused: this button has expired/);
    expect(await press(MALLORY, list, resume)).toBe('Refused: this button is for someone else.');
    expect(await status(ids.alice)).toBe('RUNNING');
    expect(await paused(schedules.alice)).toBe(true);

    // Alice resumes her recurring mission, and pauses it again from a fresh list.
    expect(await press(ALICE, list, resume)).toBe(`Resumed recurring mission ${schedules.alice}.`);
    expect(await paused(schedules.alice)).toBe(false);
    const again = await command(ALICE, '/missions');
    expect(again.text).toMatch(new RegExp(`${schedules.alice} — next run \\d{4}-`));
    const pause = again.replyMarkup!.inline_keyboard.flat().find((b) => b.text === 'Pause: daily digest')!.callback_data!;
    expect(await press(ALICE, again, pause)).toBe(`Paused recurring mission ${schedules.alice}.`);
    expect(await paused(schedules.alice)).toBe(true);
    expect(await paused(schedules.mallory)).toBe(true);

    // A stranger, and Alice in a group, get no list.
    expect((await command(STRANGER, '/missions')).text).toBe('You have no missions here.');
    expect((await command(ALICE, '/missions', { id: -100123, type: 'group' })).text).toBe('Ask me for /missions in a private chat.');

    // Alice's press cancels hers (and nothing else); the used button is gone.
    expect(await press(ALICE, list, data)).toBe(`Cancelled mission ${ids.alice}.`);
    expect((await mh.client!.workflow.getHandle(ids.alice).result()) as MissionResult).toMatchObject({ state: 'cancelled' });
    expect(await status(ids.mallory)).toBe('RUNNING');
    expect(await press(ALICE, list, data)).toMatch(/^Refused: this button has expired/);
    await tg.waitFor(() => tg.sent.get(`${list.chatId}:${list.messageId}`)!.text.includes('Cancelled mission'), 10_000, 'list edited');
  }, 120_000);
});
