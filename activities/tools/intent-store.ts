/** The at-most-once intent record port: unrepeatable tools claim their idempotency key before acting. */

/** Records "this effect was started" so a retried activity after a crash does not repeat it. */
export interface IntentStore {
  /** Claims `key`; 'already-started' means an earlier attempt got this far (and may have acted). */
  begin(key: string, info: { tool: string; inputHash: string }): Promise<'started' | 'already-started'>;
  /** Records how the claimed effect ended (a short summary, never raw output). */
  finish(key: string, summary: string): Promise<void>;
}

/** One intent as the in-memory store keeps it. */
export interface IntentRecord {
  tool: string;
  inputHash: string;
  state: 'started' | 'finished';
  outcome: string | null;
}

/** An in-memory IntentStore for unit tests (the worker uses the `tool_intents` table). */
export interface MemoryIntentStore extends IntentStore {
  /** The record for `key`, if any. */
  get(key: string): IntentRecord | undefined;
}

/** Creates an empty in-memory IntentStore (one process only: not durable, not shared). */
export function createMemoryIntentStore(): MemoryIntentStore {
  const records = new Map<string, IntentRecord>();
  return {
    async begin(key, info) {
      if (records.has(key)) return 'already-started';
      records.set(key, { tool: info.tool, inputHash: info.inputHash, state: 'started', outcome: null });
      return 'started';
    },
    async finish(key, summary) {
      const rec = records.get(key);
      if (rec) Object.assign(rec, { state: 'finished', outcome: summary });
    },
    get: (key) => records.get(key),
  };
}

/**
 * Records how a claimed effect ended, and never throws: a tool's result must not turn into a
 * failure because this bookkeeping could not be written (a database blip after the effect). The
 * call's row in `tool_calls` is the record of what happened; an intent left `started` is reconciled
 * against it (`aivyx audit verify`).
 */
export async function recordIntentEnd(intents: IntentStore, key: string, summary: string): Promise<void> {
  try {
    await intents.finish(key, summary);
  } catch {
    // see above
  }
}
