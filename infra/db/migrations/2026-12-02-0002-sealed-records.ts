/**
 * Sealed storage: `sealed_records` (XChaCha20-Poly1305 ciphertexts, one per domain + key) and
 * `storage_rotation` (the key-schedule version new writes use, for resumable key rotation).
 * Frozen in time: never edit after release; add a new dated migration instead.
 * Uses `Kysely<any>` on purpose so later changes to `Database` cannot alter this file's meaning.
 */
import { sql, type Kysely } from 'kysely';

/** Creates the sealed record table and the rotation state row (write version 1). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see top)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sealed_records')
    .addColumn('domain', 'text', (c) => c.notNull())
    // Collation "C" orders keys bytewise, so a prefix is one contiguous range of the primary key
    // index (scan) and keyset pagination does not depend on the server's locale.
    .addColumn('key', sql`text collate "C"`, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().check(sql`version >= 1`))
    .addColumn('nonce', 'bytea', (c) => c.notNull())
    .addColumn('ciphertext', 'bytea', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('sealed_records_pkey', ['domain', 'key'])
    .execute();
  // Rotation looks for rows still below the write version; this keeps that cheap.
  await db.schema.createIndex('sealed_records_version_idx').on('sealed_records').columns(['version', 'domain', 'key']).execute();

  await db.schema
    .createTable('storage_rotation')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('write_version', 'integer', (c) => c.notNull().check(sql`write_version >= 1`))
    .addColumn('started_at', 'timestamptz')
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.insertInto('storage_rotation').values({ id: 1, write_version: 1 }).execute();
}

/** Drops everything `up` created (development only: it destroys every sealed record). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('storage_rotation').execute();
  await db.schema.dropTable('sealed_records').execute();
}
