/**
 * Foundation schema: install row, audit chain (entries + head) and tool intents.
 * Frozen in time: never edit after release; add a new dated migration instead.
 * Uses `Kysely<any>` on purpose so later changes to `Database` cannot alter this file's meaning.
 */
import { sql, type Kysely } from 'kysely';

/** 64 hex zeros: the "previous mac" of the first entry. */
const GENESIS_MAC = '0'.repeat(64);

/** Creates the foundation tables and the genesis audit head. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- migrations are untyped by design (see top)
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('install')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('kdf_salt', 'text', (c) => c.notNull())
    .addColumn('kdf_params', 'text', (c) => c.notNull())
    .addColumn('kcv', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('audit_entries')
    .addColumn('seq', 'bigint', (c) => c.primaryKey().check(sql`seq > 0`))
    .addColumn('idem_key', 'text', (c) => c.notNull().unique())
    .addColumn('turn_id', 'text')
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'timestamptz', (c) => c.notNull())
    .addColumn('prev_mac', 'text', (c) => c.notNull())
    .addColumn('mac', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_entries_turn_id_idx').on('audit_entries').columns(['turn_id', 'seq']).execute();

  await db.schema
    .createTable('audit_head')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('mac', 'text', (c) => c.notNull())
    .execute();
  await db.insertInto('audit_head').values({ id: 1, seq: 0, mac: GENESIS_MAC }).execute();

  await db.schema
    .createTable('tool_intents')
    .addColumn('idem_key', 'text', (c) => c.primaryKey())
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('input_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('started', 'finished')`))
    .addColumn('outcome', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

/** Drops everything `up` created (development only: it destroys the audit log). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tool_intents').execute();
  await db.schema.dropTable('audit_head').execute();
  await db.schema.dropTable('audit_entries').execute();
  await db.schema.dropTable('install').execute();
}
