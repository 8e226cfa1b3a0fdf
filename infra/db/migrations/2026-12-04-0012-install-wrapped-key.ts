/**
 * A passphrase that can change (issue "the everyday conversation"): the install row may hold the
 * master key wrapped under a key derived from the passphrase (`wrapped_key`, hex nonce ‖ ciphertext;
 * null = the master key is the derived key itself, as every install began). Changing the passphrase
 * re-wraps the same master key under a new salt, so nothing sealed has to be re-sealed.
 * Frozen in time: never edit after release; add a new dated migration instead.
 */
import type { Kysely } from 'kysely';

/** Adds the column. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see 0001)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('install').addColumn('wrapped_key', 'text').execute();
}

/** Drops it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('install').dropColumn('wrapped_key').execute();
}
