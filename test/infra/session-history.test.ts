/**
 * The session history on sealed storage: turns in order, and a compaction summary that stands for
 * the turns up to its `through` key, so neither `load` nor `loadTurns` returns those turns again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenDatabase } from '../../infra/db/index.js';
import { createSessionHistory, summaryKey } from '../../infra/session-history.js';
import { SealedStorage, StorageKeyring } from '../../infra/storage/index.js';
import { openStorageBackends } from '../support/postgres.js';

describe.each(openStorageBackends())('session history on $name', (backend) => {
  let s: OpenDatabase;
  let storage: SealedStorage;
  beforeAll(async () => {
    s = await backend.open();
    storage = SealedStorage.open(s.db, new StorageKeyring(new Uint8Array(32).fill(7)));
  });
  afterAll(async () => {
    await s.close();
  });

  it('loads the summary first and only the turns after it', async () => {
    const history = createSessionHistory(storage.domain('sessions'));
    const session = `s-${backend.name}-${Date.now()}`;
    for (const i of [1, 2, 3])
      await history.record(session, {
        turnId: `t${i}`,
        receivedAt: i * 1000,
        entries: [
          { role: 'user', text: `q${i}`, ...(i === 1 ? { untrusted: 'a page from x.example' } : {}) },
          { role: 'assistant', text: `a${i}` },
        ],
      });
    const before = await history.loadTurns!(session);
    expect(before.summary).toBeUndefined();
    expect(before.turns.map((t) => t.entries[0]?.text)).toEqual(['q1', 'q2', 'q3']);
    const summary = {
      through: before.turns[1]!.key,
      entry: { role: 'user' as const, text: 'Summary: q1 and q2', untrusted: 'a page from x.example' },
    };
    await history.saveSummary!(session, summary);
    const after = await history.loadTurns!(session);
    expect(after.summary).toEqual(summary);
    expect(after.turns.map((t) => t.entries[0]?.text)).toEqual(['q3']);
    expect(await history.load(session, 40)).toEqual([summary.entry, { role: 'user', text: 'q3' }, { role: 'assistant', text: 'a3' }]);
    expect(await history.load(session, 2)).toEqual([
      { role: 'user', text: 'q3' },
      { role: 'assistant', text: 'a3' },
    ]);
    expect(summaryKey(session).startsWith(`history/${session}/`)).toBe(false);
  });
});
