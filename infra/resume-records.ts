/**
 * Resume records (activities/ports.ts `ResumeRecord`) in the sealed `sessions` domain: they hold
 * what the session's history holds — the owner's words, tool results — so they are sealed like it,
 * under a key derived from the turn id (ids are free text; the key stays short and uniform). A
 * record is used once: openTurn claims it (`authority_claims`, kind `resume`), the row decides nothing.
 * A record is kept as long as its gate can be decided (`RESUME_TTL_MS`); `sweep` deletes older ones.
 */
import { createHash } from 'node:crypto';
import type { ResumeRecord, ResumeRecordPort } from '../activities/ports.js';
import { VALUE_TTL_MS } from '../core/values.js';
import type { DomainHandle } from './storage/index.js';

const PREFIX = 'resume/';
const keyOf = (turnId: string): string => `${PREFIX}${createHash('sha256').update(turnId).digest('hex')}`;

/** How long a record is kept: a gate waits for a person no longer than a held value lives (72 hours), and a day's grace. */
export const RESUME_TTL_MS = VALUE_TTL_MS + 86_400_000;

/** The stored row: the record and when it was saved. */
type Stored = ResumeRecord & { savedAt?: number };

/** A `ResumeRecordPort` over a sealed domain (the `sessions` domain), with the sweep of old records. */
export function createResumeRecords(sessions: DomainHandle, now: () => number = Date.now): ResumeRecordPort & { sweep(): Promise<number> } {
  return {
    async save(record) {
      await sessions.putJson(keyOf(record.turnId), { ...record, savedAt: now() } satisfies Stored);
    },
    async load(turnId) {
      const stored = await sessions.getJson<Stored>(keyOf(turnId));
      // The seal binds the row to its key; the id inside says the hash did not collide.
      if (stored?.turnId !== turnId) return undefined;
      const { savedAt: _, ...record } = stored;
      return record;
    },
    async sweep() {
      let deleted = 0;
      for await (const { key, value } of sessions.scan(PREFIX)) {
        const stored = JSON.parse(new TextDecoder().decode(value)) as Stored;
        // A record saved before records were dated gets its date now, so it is kept its full time from here.
        if (stored.savedAt === undefined) await sessions.putJson(key, { ...stored, savedAt: now() });
        else if (now() - stored.savedAt >= RESUME_TTL_MS && (await sessions.delete(key))) deleted++;
      }
      return deleted;
    },
  };
}
