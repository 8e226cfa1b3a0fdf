/**
 * Resume records (activities/ports.ts `ResumeRecord`) in the sealed `sessions` domain: they hold
 * what the session's history holds — the owner's words, tool results — so they are sealed like it,
 * under a key derived from the turn id (ids are free text; the key stays short and uniform). A
 * record is used once: openTurn claims it (`authority_claims`, kind `resume`), the row decides nothing.
 */
import { createHash } from 'node:crypto';
import type { ResumeRecord, ResumeRecordPort } from '../activities/ports.js';
import type { DomainHandle } from './storage/index.js';

const keyOf = (turnId: string): string => `resume/${createHash('sha256').update(turnId).digest('hex')}`;

/** A `ResumeRecordPort` over a sealed domain (the `sessions` domain). */
export function createResumeRecords(sessions: DomainHandle): ResumeRecordPort {
  return {
    async save(record) {
      await sessions.putJson(keyOf(record.turnId), record);
    },
    async load(turnId) {
      const record = await sessions.getJson<ResumeRecord>(keyOf(turnId));
      // The seal binds the row to its key; the id inside says the hash did not collide.
      return record?.turnId === turnId ? record : undefined;
    },
  };
}
