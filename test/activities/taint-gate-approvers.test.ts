/**
 * Issue 29, the worker's half: who may decide a gate follows why it was opened. A gate whose call
 * follows untrusted content is decided by the owners alone — asked when it opens (openGate answers
 * with the owners, whatever approvers the definition names), and re-checked against this worker's
 * own owners when a decision arrives, whatever the gate's record lists or the channel says. The
 * activities run as the worker runs them (MockActivityEnvironment) over a real PostgreSQL.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScriptedProvider } from '../../activities/llm/scripted-provider.js';
import { wireTurnActivities } from '../../app/wiring.js';
import { signedDecision, signedMissionArgs } from '../../channels/mission-gateway.js';
import { gateApproversFor, isOwner, taintGateRefusal } from '../../core/gate-approvers.js';
import { auditEntriesForTurn } from '../../infra/audit/index.js';
import { createAttestor, type Attestor } from '../../infra/attestation.js';
import { openDatabase, type OpenDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import type { MasterKey } from '../../infra/crypto/index.js';
import { StreamHub } from '../../infra/stream-hub.js';
import type { MissionDefinition } from '../../workflows/mission-messages.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

let database: { url: string; drop(): Promise<void> };
let opened: OpenDatabase;
let master: MasterKey;
let attestor: Attestor;

/** The worker's activities with these owners (`AIVYX_OWNER_IDS`). */
const workerWith = (owners: string[]) =>
  wireTurnActivities({
    db: opened.db,
    master,
    hub: new StreamHub(),
    llm: createScriptedProvider({ rules: [{ steps: [{ say: 'ok' }] }] }),
    agent: { capabilities: ['fs.write'], budgetMs: 60_000, confirmFirst: [], trustedPlaces: { owners } },
  });

beforeAll(async () => {
  database = await createTestDatabase('aivyx_taintgate');
  opened = await openDatabase({ databaseUrl: database.url });
  master = await openKeyring(opened.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  attestor = createAttestor(master.subkey('attestation'));
});
afterAll(async () => {
  await opened?.close();
  await database?.drop();
});

const as = (missionId: string, seq: string) =>
  new MockActivityEnvironment({ activityId: seq, isLocal: false, workflowExecution: { workflowId: missionId, runId: 'run-1' } });

const BOB = { identity: 'bob', channel: 'telegram' };
const OWNER_ON_TELEGRAM = { identity: '4242', channel: 'telegram' };

/** A mission the owner made, naming Bob (a colleague, not an owner) as its approver. */
const mission = (missionId: string, taintedBy?: string[]): MissionDefinition => ({
  missionId,
  goal: 'file the report',
  steps: [{ text: 'write the report' }],
  approvers: [BOB],
  onExpire: 'fail',
  capabilities: ['fs.write'],
  channel: { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: missionId, sender: 'local-user' },
  ...(taintedBy ? { taintedBy } : {}),
});

async function openGateOf(acts: ReturnType<typeof workerWith>, def: MissionDefinition) {
  await expect(as(def.missionId, '1').run(acts.openMission, { args: signedMissionArgs(attestor, def) })).resolves.toMatchObject({
    ok: true,
  });
  const gate = { definition: def, gateId: `${def.missionId}/gate-1`, step: 0, tool: 'fs.write', input: { path: '/tmp/r', content: 'x' } };
  return as(def.missionId, '2').run(acts.openGate, gate);
}

const decide = (acts: ReturnType<typeof workerWith>, def: MissionDefinition, who: { identity: string; channel: string }, seq: string) =>
  as(def.missionId, seq).run(acts.verifyGateDecision, {
    kind: 'approve' as const,
    request: signedDecision(attestor, 'approve', `${def.missionId}/gate-1`, { ...who, trustTier: 'SemiTrusted' }),
  });

describe('who may decide a gate (issue 29)', () => {
  it('an untainted gate asks the definition’s approvers, and Bob decides it', async () => {
    const acts = workerWith(['telegram:4242']);
    const def = mission('mission-untainted-gate');
    expect(await openGateOf(acts, def)).toMatchObject({ approvers: [BOB] });
    expect(await decide(acts, def, BOB, '3')).toEqual({ ok: true });
  });

  it('a gate after untrusted content asks the owners only: Bob, named by the definition, is refused and audited', async () => {
    const acts = workerWith(['telegram:4242']);
    const def = mission('mission-tainted-gate', ['a page from evil.example']);
    const gate = await openGateOf(acts, def);
    expect(gate).toMatchObject({ approvers: [{ identity: 'local-user', channel: 'cli' }, OWNER_ON_TELEGRAM], ownersOnly: true });
    expect(await decide(acts, def, BOB, '3')).toMatchObject({ ok: false, reason: expect.stringMatching(/was not asked/) });
    const audit = (await auditEntriesForTurn(opened.db, def.missionId)).map((e) => e.event);
    expect(audit.find((e) => e.type === 'GateOpened')).toMatchObject({
      approvers: ['local-user@cli', '4242@telegram'],
      taintedBy: ['a page from evil.example'],
    });
    expect(audit.filter((e) => e.type === 'GateDecisionRejected')).toHaveLength(1);
    expect(await decide(acts, def, OWNER_ON_TELEGRAM, '4')).toEqual({ ok: true });
  });

  it('the decision is checked against this worker’s owners, whatever the gate’s record lists: an id no longer an owner is refused', async () => {
    const def = mission('mission-owner-removed', ['a message from 200000004 on telegram (SemiTrusted)']);
    await openGateOf(workerWith(['telegram:4242']), def);
    // The owner took 4242 out of AIVYX_OWNER_IDS (a lost phone) before the decision arrived.
    const later = workerWith([]);
    const verdict = await decide(later, def, OWNER_ON_TELEGRAM, '3');
    expect(verdict).toMatchObject({ ok: false, reason: expect.stringMatching(/is not an owner: a gate opened after untrusted content/) });
    const audit = (await auditEntriesForTurn(opened.db, def.missionId)).map((e) => e.event);
    expect(audit.filter((e) => e.type === 'GateApproved')).toEqual([]);
    expect(audit.filter((e) => e.type === 'GateDecisionRejected')).toHaveLength(1);
  });

  it('owners are trusted with their own approvals, even when their own text was among what the turn read', () => {
    const forwarded = ['a message from 4242 on telegram (SemiTrusted)', 'a page from evil.example'];
    expect(taintGateRefusal({ ...OWNER_ON_TELEGRAM, trustTier: 'SemiTrusted' }, forwarded, ['telegram:4242'])).toBeUndefined();
    expect(taintGateRefusal({ ...BOB, trustTier: 'SemiTrusted' }, forwarded, ['telegram:4242'])).toMatch(/not an owner/);
    // The owner at their machine is Trusted: no remote channel can be.
    expect(isOwner({ identity: 'rest-client', channel: 'rest', trustTier: 'Trusted' }, [])).toBe(true);
    expect(isOwner({ identity: '4242', channel: 'email' }, ['telegram:4242'])).toBe(false);
    // An owner who asks keeps their place among the approvers; a non-owner who asks is not one.
    const owner = { identity: '4242', channel: 'telegram', trustTier: 'SemiTrusted' as const };
    expect(gateApproversFor(owner, forwarded, ['telegram:4242'])).toEqual([OWNER_ON_TELEGRAM, { identity: 'local-user', channel: 'cli' }]);
  });
});
