/**
 * A specialist's confirm-first call approved from Telegram runs once (issue 33). grammY over real HTTP
 * against OUR Bot API emulator (test/support/bot-api-emulator.ts), not Telegram itself; a real worker
 * on the shared dev server, real PostgreSQL.
 *
 * The lead is the owner's request on a local (Trusted) channel: a Telegram chat is at most SemiTrusted,
 * and `agent.delegate` is Trusted only, so no Telegram turn delegates. The lead read a file outside
 * the trusted roots before it delegated, so its specialist starts tainted and its confirm-first write
 * is decided by the owners only — among them the owner's Telegram identity (`AIVYX_OWNER_IDS`), whose
 * DM gets the request with buttons. Her press approves; the call runs exactly once, in a rerun that
 * holds no more than the specialist; a second press is refused and changes nothing.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { awaitTurnOutcome } from '../../channels/turn-client.js';
import { MissionGateway } from '../../channels/mission-gateway.js';
import { startTelegramChannel, type TelegramChannel } from '../../channels/telegram/index.js';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { AuditEvent } from '../../core/audit-events.js';
import { textContent } from '../../core/message.js';
import { parseSpecialists } from '../../core/specialists.js';
import { createAttestor } from '../../infra/attestation.js';
import { createAuditPort } from '../../infra/audit-port.js';
import { GateTokens, gateTokenKey } from '../../infra/gate-tokens.js';
import { openKeyring } from '../../infra/keyring.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { confirmationMissionId, confirmationRerunTurnId } from '../../workflows/turn-ids.js';
import { startBotApiEmulator, type BotApiEmulator, type SentMessage, type TgUser, QUICK_POLLING } from '../support/bot-api-emulator.js';
import { startMissionHarness, type MissionHarness } from '../support/mission-harness.js';
import { testConnection, type TestConnection } from '../support/temporal.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

const ALICE = { id: 4242, first_name: 'Alice' };
const dir = mkdtempSync(join(tmpdir(), 'aivyx-tg-specialist-'));
const trusted = join(dir, 'mine');
const notes = join(dir, 'notes');
const downloads = join(dir, 'downloads');
for (const d of [trusted, notes, downloads]) mkdirSync(d);
writeFileSync(join(downloads, 'letter.txt'), 'a letter from someone else');
const note = join(notes, 'letter.md');

const script = {
  rules: [
    {
      match: 'read the letter, then have it filed',
      steps: [
        { call: [{ tool: 'fs.read', input: { path: join(downloads, 'letter.txt') } }] },
        { call: [{ tool: 'agent.delegate', input: { specialist: 'writer', task: 'file the letter' } }] },
        { say: 'lead: {{results}}' },
      ],
    },
    { match: 'file the letter', steps: [{ call: [{ tool: 'fs.write', input: { path: note, content: 'filed' } }] }, { say: 'filed' }] },
  ],
};

let tc: TestConnection;
let mh: MissionHarness;
let gateway: TurnGateway;
let tg: BotApiEmulator;
let channel: TelegramChannel;
const deliveries = new DeliveryRegistry();

beforeAll(async () => {
  tc = await testConnection();
  mh = await startMissionHarness(
    { nativeConnection: tc.connection, namespace: tc.namespace },
    {
      script,
      deliveries,
      agent: {
        capabilities: ['fs.read', 'fs.write', 'llm.call', 'agent.delegate'],
        confirmFirst: ['fs.write'],
        specialists: parseSpecialists([
          { name: 'writer', instructions: 'File notes.', capabilities: [`fs.write:${notes}/**`, 'llm.call'] },
        ]),
        // Alice is an owner (AIVYX_OWNER_IDS); the downloads folder is not a trusted root.
        trustedPlaces: { roots: [trusted], owners: [`telegram:${ALICE.id}`] },
      },
      confirmWith: tc.client,
    },
  );
  const master = await openKeyring(mh.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  const state = SealedStorage.open(mh.db, master).domain('channel_state');
  const attestor = createAttestor(master.subkey('attestation'));
  gateway = new TurnGateway({ client: tc.client, taskQueue: mh.taskQueue, attestor, hub: mh.hub });
  const missions = new MissionGateway({
    client: tc.client,
    taskQueue: mh.taskQueue,
    attestor,
    capabilities: ['fs.write'],
    dashboard: true,
    audit: createAuditPort(mh.db, master.subkey('audit')),
  });
  tg = await startBotApiEmulator(`${randomInt(100_000, 999_999)}:TEST-token`);
  channel = await startTelegramChannel({
    token: tg.token,
    apiRoot: tg.apiRoot,
    gateway,
    deliveries,
    missions,
    gateTokens: new GateTokens(gateTokenKey(master.subkey('channel_state')), state),
    storage: state,
    allowlist: [ALICE.id],
    ...QUICK_POLLING,
  });
}, 120_000);
afterAll(async () => {
  await channel?.stop();
  await tg?.close();
  await mh?.stop();
});

const messagesTo = (chatId: number): SentMessage[] => [...tg.sent.values()].filter((m) => m.chatId === chatId);
const approveButton = (m: SentMessage) => m.replyMarkup!.inline_keyboard[0]![0]!.callback_data!;
const decisions = (audit: AuditEvent[]) => audit.filter((e) => e.type === 'GateApproved' || e.type === 'GateDenied');

/** Presses a button and returns the bot's answer to that press. */
async function press(user: TgUser, m: SentMessage, data: string): Promise<string> {
  const id = (tg.pressButton(user, m, data).callback_query as { id: string }).id;
  await tg.waitFor(() => tg.answersTo(id).length > 0, 20_000, 'callback answered');
  return tg.answersTo(id)[0]!;
}

it("a specialist's confirm-first call reaches the owner's Telegram DM; her press runs it exactly once; a second press is refused", async () => {
  // The owner asks on her own machine (the CLI's facts): the lead reads the letter, then delegates its filing.
  const facts = { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: `s-${randomUUID()}`, sender: 'local-user' } as const;
  const message = {
    id: randomUUID(),
    sessionId: facts.sessionId,
    content: textContent('read the letter, then have it filed'),
    receivedAt: Date.now(),
  };
  const lead = await gateway.start(facts, message, () => undefined);
  const outcome = await lead.outcome;
  expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(
    /Failed \(ToolEscalation: specialist writer stopped: its fs\.write call needs a person's approval/,
  );
  const child = `${lead.turnWorkflowId}/tool-1-0/writer`;
  const missionId = confirmationMissionId(child);

  // The request for exactly the specialist's call arrives in Alice's DM, with buttons; nothing ran yet.
  await tg.waitFor(() => messagesTo(ALICE.id).some((m) => m.text.includes(`mission ${missionId}`) && m.replyMarkup), 45_000, 'the request');
  const req = messagesTo(ALICE.id).find((m) => m.text.includes(`mission ${missionId}`) && m.replyMarkup)!;
  expect(req.text).toContain('Tool: fs.write');
  expect(req.text).toContain('Only an owner may decide this');
  expect(existsSync(note)).toBe(false);
  expect((await mh.audit(missionId)).find((e) => e.type === 'GateOpened')).toMatchObject({
    approvers: ['local-user@cli', `${ALICE.id}@telegram`],
  });

  // The button's data as pressed (the decided notice removes the buttons afterwards).
  const approve = approveButton(req);
  expect(await press(ALICE, req, approve)).toMatch(/^Approved by Alice/);
  // The confirmation mission ends once its rerun has; the rerun is the approved call, run once.
  await tc.client.workflow.getHandle(missionId).result();
  const rerun = confirmationRerunTurnId(child);
  expect(await awaitTurnOutcome(tc.client, rerun)).toMatchObject({ status: 'Completed', finalMessage: 'filed' });
  expect(readFileSync(note, 'utf8')).toBe('filed');
  const ran = (await mh.audit(rerun)).filter((e) => e.type === 'ToolCall');
  expect(ran).toEqual([expect.objectContaining({ toolId: 'fs.write', outcome: expect.stringMatching(/^Completed/) })]);
  expect((await mh.audit(rerun)).find((e) => e.type === 'TurnStarted')).toMatchObject({
    effectiveCapabilities: [`fs.write:${notes}/**`, 'llm.call'],
  });

  // A second press is refused; the audit log and the file are as they were.
  const audit = await mh.audit(missionId);
  expect(decisions(audit)).toEqual([
    expect.objectContaining({ type: 'GateApproved', approver: String(ALICE.id), approverChannel: 'telegram' }),
  ]);
  expect(await press(ALICE, req, approve)).toMatch(/^Already decided/);
  expect(await mh.audit(missionId)).toEqual(audit);
  expect((await mh.audit(rerun)).filter((e) => e.type === 'ToolCall')).toHaveLength(1);
  expect(readFileSync(note, 'utf8')).toBe('filed');
});
