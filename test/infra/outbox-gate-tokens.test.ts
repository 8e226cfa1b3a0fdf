/**
 * The channel outbox (at most one send per key, across retries and restarts) and MACed gate
 * tokens (unguessable, bound to one gate and one approver, single use) over sealed channel_state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MasterKey } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { GateTokens, gateTokenKey } from '../../infra/gate-tokens.js';
import { createOutbox } from '../../infra/outbox.js';
import { SealedStorage, type DomainHandle } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';

const [backend] = openStorageBackends();

let s: OpenDatabase;
let store: DomainHandle;
const master = new MasterKey(new Uint8Array(32).fill(7));

beforeAll(async () => {
  s = await backend!.open();
  store = SealedStorage.open(s.db, master).domain('channel_state');
});
afterAll(async () => {
  await s.close();
});

describe('outbox', () => {
  it('sends once per key; a second call returns the first value without sending', async () => {
    const outbox = createOutbox(store);
    let sends = 0;
    const send = async () => ++sends;
    expect(await outbox.once('wf/run/1', send)).toEqual({ status: 'sent', value: 1 });
    expect(await outbox.once('wf/run/1', send)).toEqual({ status: 'already-sent', value: 1 });
    expect(sends).toBe(1);
    expect(await outbox.sent('wf/run/1')).toBe(1);
  });

  it('a send that throws is not recorded, so the retry sends', async () => {
    const outbox = createOutbox(store);
    let calls = 0;
    const flaky = async () => {
      calls++;
      if (calls === 1) throw new Error('451 try again later');
      return 'ok';
    };
    await expect(outbox.once('wf/run/2', flaky)).rejects.toThrow(/451/);
    expect(await outbox.once('wf/run/2', flaky)).toEqual({ status: 'sent', value: 'ok' });
    expect(calls).toBe(2);
  });

  it('a crash between sending and recording is reported uncertain and not sent again', async () => {
    const outbox = createOutbox(store);
    await store.putJson('outbox/wf/run/3', { state: 'sending', at: 1 });
    let sends = 0;
    expect(await outbox.once('wf/run/3', async () => ++sends)).toEqual({ status: 'uncertain' });
    expect(sends).toBe(0);
  });
});

describe('gate tokens', () => {
  const grant = { gateId: 'mission-abc/gate-1', missionId: 'mission-abc', identity: '4242', channel: 'telegram' };

  it('a token fits Telegram callback data, verifies, and resolves to its gate and approver', async () => {
    const tokens = new GateTokens(gateTokenKey(master.subkey('channel_state')), store);
    const token = await tokens.issue(grant);
    expect(`a:${token}`.length).toBeLessThanOrEqual(64);
    expect(await tokens.check(token)).toEqual({ ok: true, grant });
    expect(GateTokens.find(`Re: [aivyx approve ${token}] deploy`)).toBe(token);
  });

  it('refuses an altered MAC, an unknown ref, garbage, and a token minted under another key', async () => {
    const tokens = new GateTokens(gateTokenKey(master.subkey('channel_state')), store);
    const token = await tokens.issue(grant);
    const [ref, mac] = token.split('.') as [string, string];
    const flipped = `${ref}.${(mac[0] === '0' ? '1' : '0') + mac.slice(1)}`;
    expect(await tokens.check(flipped)).toEqual({ ok: false, reason: expect.stringMatching(/does not verify/) });
    expect(await tokens.check(`AAAAAAAAAAA.${mac}`)).toEqual({ ok: false, reason: expect.stringMatching(/unknown/) });
    expect(await tokens.check('approve')).toEqual({ ok: false, reason: expect.stringMatching(/not an approval token/) });
    const other = new GateTokens(gateTokenKey(new Uint8Array(32).fill(9)), store);
    expect((await other.check(token)).ok).toBe(false);
  });

  it('a record moved to another approver no longer verifies (the MAC binds gate and identity)', async () => {
    const tokens = new GateTokens(gateTokenKey(master.subkey('channel_state')), store);
    const token = await tokens.issue(grant);
    const ref = token.split('.')[0]!;
    const rec = await store.getJson<Record<string, unknown>>(`gate-token/${ref}`);
    await store.putJson(`gate-token/${ref}`, { ...rec, identity: '9999' });
    expect(await tokens.check(token)).toEqual({ ok: false, reason: expect.stringMatching(/does not verify/) });
  });

  it('is single use: after markUsed the check reports the decision', async () => {
    const tokens = new GateTokens(gateTokenKey(master.subkey('channel_state')), store);
    const token = await tokens.issue(grant);
    await tokens.markUsed(token, 'approve');
    const again = await tokens.check(token);
    expect(again).toMatchObject({ ok: true, used: { decision: 'approve' } });
  });
});
