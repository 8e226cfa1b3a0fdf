/**
 * Real databases for tests (kysely style: no mocks). Each test file gets its own PostgreSQL
 * database; `openStorageBackends` lets one suite run on both PostgreSQL and PGlite.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type OpenDatabase } from '../../infra/db/index.js';

/** The test cluster's admin URL (trust auth). */
export const ADMIN_URL = process.env['AIVYX_TEST_PG_ADMIN_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Creates a fresh database `<prefix>_<random>`; `drop()` removes it (forcing connections closed). */
export async function createTestDatabase(prefix = 'aivyx_t'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`.toLowerCase();
  await adminQuery(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`drop database if exists "${name}" with (force)`) };
}

/** Runs one statement on the admin database. */
async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A backend a suite can open: a fresh migrated database that `close()` also disposes of. */
export interface StorageBackend {
  name: 'postgres' | 'pglite';
  open(): Promise<OpenDatabase>;
}

/** Both backends, for `describe.each(openStorageBackends())('… on $name', …)`. */
export function openStorageBackends(): StorageBackend[] {
  return [
    {
      name: 'postgres',
      async open() {
        const tdb = await createTestDatabase();
        const opened = await openDatabase({ databaseUrl: tdb.url, poolSize: 12 });
        return {
          ...opened,
          close: async () => {
            await opened.close();
            await tdb.drop();
          },
        };
      },
    },
    { name: 'pglite', open: () => openDatabase({ pgliteDir: 'memory://' }) },
  ];
}
