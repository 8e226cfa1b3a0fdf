/**
 * Opens the aivyx database: PostgreSQL when a URL is given, otherwise PGlite (embedded
 * PostgreSQL in WASM) so the default install needs no server. Same migrations, same queries.
 */
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { AivyxError } from '../../core/errors.js';
import type { Database } from './database.js';
import { migrationProvider } from './migrations/index.js';

/** Which engine backs an open database. */
export type DatabaseKind = 'postgres' | 'pglite';

/** An open database: the kysely handle plus a close that releases the pool / PGlite. */
export interface OpenDatabase {
  db: Kysely<Database>;
  kind: DatabaseKind;
  close(): Promise<void>;
}

/** Where to find the database. */
export interface OpenDatabaseOptions {
  /** postgres://… URL; wins when set. */
  databaseUrl?: string;
  /** PGlite data directory, or 'memory://' for a throwaway in-memory database. */
  pgliteDir?: string;
  /** Pool size for PostgreSQL (default 10). */
  poolSize?: number;
}

const INT8_OID = 20;

/**
 * int8 → number. Safe for our int8 columns (audit seq, counts): they count rows and would need
 * 2^53 ≈ 9·10^15 appends to lose precision; beyond that we fail loudly instead of rounding.
 */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) {
    throw new AivyxError('Storage', `int8 value ${text} exceeds Number.MAX_SAFE_INTEGER`);
  }
  return n;
}

// Per-pool type overrides rather than pg.types.setTypeParser, which would change every pg
// user in the process.
const pgTypes: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** Opens (and migrates to latest) the database chosen by `opts`. */
export async function openDatabase(opts: OpenDatabaseOptions): Promise<OpenDatabase> {
  let db: Kysely<Database>;
  let kind: DatabaseKind;
  if (opts.databaseUrl) {
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10, types: pgTypes });
    // An idle connection dropped by the server (restart, failover, `drop database … with (force)`)
    // is reported here; without a listener it would crash the process. The pool replaces it, and
    // a query on a dead connection still fails loudly where it runs.
    pool.on('error', () => undefined);
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    kind = 'postgres';
  } else {
    const dir = opts.pgliteDir;
    if (!dir) {
      throw new AivyxError('Config', 'no database configured', {
        hint: 'set DATABASE_URL for PostgreSQL, or give a PGlite data directory (or memory://)',
      });
    }
    if (!dir.startsWith('memory://')) await mkdir(dir, { recursive: true });
    let lite: PGlite;
    try {
      lite = await PGlite.create(dir === 'memory://' ? undefined : dir, { parsers: { [INT8_OID]: parseInt8 } });
    } catch (cause) {
      throw new AivyxError('Storage', `cannot open PGlite database in ${dir}: ${(cause as Error).message}`, {
        cause,
        hint: 'PGlite allows one process per data directory; is another aivyx running?',
      });
    }
    db = new Kysely<Database>({ dialect: new PGliteDialect(lite) });
    kind = 'pglite';
  }
  try {
    await migrateToLatest(db);
  } catch (e) {
    await db.destroy();
    throw e;
  }
  return { db, kind, close: () => db.destroy() };
}

/**
 * Applies pending migrations. Idempotent; concurrent callers are serialized by kysely's
 * migration lock (an advisory lock on PostgreSQL). Throws Storage naming the failing migration.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  let outcome;
  try {
    outcome = await migrator.migrateToLatest();
  } catch (cause) {
    throw new AivyxError('Storage', `database migration failed: ${(cause as Error).message}`, { cause });
  }
  const { error, results } = outcome;
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? '(before any migration ran)';
    const why = error instanceof Error ? error.message : String(error);
    throw new AivyxError('Storage', `database migration ${failed} failed: ${why}`, {
      cause: error,
      detail: { migration: failed },
      hint: 'the database was left at the last successful migration; fix the cause and restart',
    });
  }
}
