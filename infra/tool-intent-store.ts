/** The at-most-once intent record (`tool_intents`) that shell.exec and other unrepeatable tools use. */
import type { Kysely } from 'kysely';
import type { IntentStore } from '../activities/tools/intent-store.js';
import type { Database } from './db/index.js';

/** An `IntentStore` over the `tool_intents` table: `begin` is an insert that only the first attempt wins. */
export function createIntentStore(db: Kysely<Database>): IntentStore {
  return {
    async begin(key, info) {
      const inserted = await db
        .insertInto('tool_intents')
        .values({ idem_key: key, tool: info.tool, input_hash: info.inputHash, state: 'started', outcome: null })
        .onConflict((oc) => oc.column('idem_key').doNothing())
        .returning('idem_key')
        .executeTakeFirst();
      return inserted ? 'started' : 'already-started';
    },
    async finish(key, summary) {
      await db.updateTable('tool_intents').set({ state: 'finished', outcome: summary }).where('idem_key', '=', key).execute();
    },
  };
}
