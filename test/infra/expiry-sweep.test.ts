/**
 * Sealed rows past their use are deleted, not only refused (infra/expiry-sweep.ts): a held value after
 * its 72 hours, a resume record once its gate can no longer be decided; a live one is kept, a record
 * stored before records were dated is kept its full time from the first sweep; a failing kind is
 * logged and the others are still swept.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ResumeRecord } from '../../activities/ports.js';
import { VALUE_TTL_MS } from '../../core/values.js';
import { MasterKey } from '../../infra/crypto/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { startExpirySweep } from '../../infra/expiry-sweep.js';
import { createResumeRecords, RESUME_TTL_MS } from '../../infra/resume-records.js';
import { SealedStorage, type DomainHandle } from '../../infra/storage/index.js';
import { createValueStore } from '../../infra/value-store.js';
import { openStorageBackends } from '../support/postgres.js';

const [backend] = openStorageBackends();
const master = new MasterKey(new Uint8Array(32).fill(7));
let s: OpenDatabase;
let sessions: DomainHandle;
let clock = Date.UTC(2026, 11, 5);
const now = () => clock;

beforeAll(async () => {
  s = await backend!.open();
  sessions = SealedStorage.open(s.db, master).domain('sessions');
});
afterAll(async () => s?.close());

const record = (turnId: string): ResumeRecord => ({
  turnId,
  runId: 'r1',
  step: 0,
  call: { callId: 'c0', tool: 'net.post', input: { url: 'https://x.example/' } },
  transcript: [],
  context: [],
  taint: [],
  trusted: [],
});

describe('the expiry sweep', () => {
  it('deletes a held value past its expiry and keeps a live one', async () => {
    const values = createValueStore(sessions, now);
    const held = (id: string, expiresAt: number) => ({ id, turnId: 't', idemKey: `t/${id}`, label: 'a page', body: 'x', expiresAt });
    await values.put(held('v000000000001', clock + VALUE_TTL_MS));
    await values.put(held('v000000000002', clock - 1));
    expect(await values.sweep()).toBe(1);
    expect(await values.get('v000000000002')).toBeUndefined();
    expect(await values.get('v000000000001')).toMatchObject({ label: 'a page' });
  });

  it('deletes a resume record once its gate can no longer be decided; an undated one is dated and kept', async () => {
    const records = createResumeRecords(sessions, now);
    await records.save(record('turn/old'));
    // A record written before records were dated (as an older worker wrote it).
    await sessions.putJson(`resume/${'0'.repeat(64)}`, record('turn/undated'));
    clock += RESUME_TTL_MS - 1;
    await records.save(record('turn/new'));
    const firstSweep = clock;
    expect(await records.sweep()).toBe(0);
    expect(await records.load('turn/old')).toEqual(record('turn/old'));
    clock += 1;
    expect(await records.sweep()).toBe(1);
    expect(await records.load('turn/old')).toBeUndefined();
    expect(await records.load('turn/new')).toEqual(record('turn/new'));
    expect(await sessions.getJson(`resume/${'0'.repeat(64)}`)).toMatchObject({ turnId: 'turn/undated', savedAt: firstSweep });
  });

  it('logs a kind whose sweep fails and sweeps the others', async () => {
    const lines: string[] = [];
    const sweep = startExpirySweep({
      kinds: [
        { what: 'broken things', sweep: () => Promise.reject(new Error('database away')) },
        { what: 'held values', sweep: async () => 2 },
      ],
      log: (l) => lines.push(l),
    });
    sweep.stop();
    await vi.waitFor(() => expect(lines).toHaveLength(2));
    expect(lines).toEqual(['broken things: expiry sweep failed: database away', 'held values: deleted 2 expired']);
  });
});
