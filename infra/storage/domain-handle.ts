/**
 * One storage domain's view of `sealed_records`: get/put/delete/scan of sealed values under
 * that domain's subkey. Every value is opened (authenticated) before a caller sees it.
 */
import { sql, type Kysely } from 'kysely';
import { AivyxError } from '../../core/errors.js';
import type { Database } from '../db/database.js';
import { openRecord, sealRecord, toPlain } from './record-seal.js';
import type { StorageKeys } from './storage-keys.js';

/** The seed's five storage domains (attestation and payload keys never seal rows). */
export type StorageDomain = 'sessions' | 'memory' | 'audit' | 'secrets' | 'channel_state' | 'config';

/** Every StorageDomain, in a stable order. */
export const STORAGE_DOMAINS: readonly StorageDomain[] = ['sessions', 'memory', 'audit', 'secrets', 'channel_state', 'config'];

/** Options of `DomainHandle.scan`. */
export interface ScanOptions {
  /** Rows fetched per query (default 100): memory stays bounded however many rows match. */
  batchSize?: number;
}

/** Sealed key/value access to one domain. */
export interface DomainHandle {
  readonly domain: StorageDomain;
  /** The value at `key`, or undefined; throws Crypto if the stored row does not authenticate. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Seals `value` under the current write version and stores it at `key` (insert or replace). */
  put(key: string, value: Uint8Array): Promise<void>;
  /** Removes `key`; true when a row was there. */
  delete(key: string): Promise<boolean>;
  /** Streams every entry whose key starts with `prefix`, in bytewise key order, batch by batch. */
  scan(prefix: string, opts?: ScanOptions): AsyncIterable<{ key: string; value: Uint8Array }>;
  /** `get` + JSON.parse of the UTF-8 value. */
  getJson<T>(key: string): Promise<T | undefined>;
  /** JSON.stringify + `put`. */
  putJson(key: string, value: unknown): Promise<void>;
}

/** Longest key accepted (characters); keys are index entries, not payloads. */
export const MAX_KEY_LENGTH = 1024;

/** Throws Config unless `key` can be stored and round-trips exactly through PostgreSQL text. */
export function assertStorageKey(key: string, what = 'storage key'): void {
  // NUL is not allowed in PostgreSQL text; a lone surrogate would not survive UTF-8.
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || key.includes('\u0000') || /\p{Surrogate}/u.test(key)) {
    throw new AivyxError('Config', `invalid ${what} ${JSON.stringify(key)}`, {
      hint: `use 1–${MAX_KEY_LENGTH} characters of well-formed text without NUL`,
    });
  }
}

/** Bytes as a Buffer: pg binds Buffers as bytea; PGlite accepts any Uint8Array. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Default `DomainHandle` over a kysely database. */
export class SealedDomainHandle implements DomainHandle {
  /** Creates the handle; use `SealedStorage.domain` rather than calling this. */
  constructor(
    readonly domain: StorageDomain,
    private readonly db: Kysely<Database>,
    private readonly keys: StorageKeys,
  ) {}

  /** The value at `key`, or undefined. */
  async get(key: string): Promise<Uint8Array | undefined> {
    assertStorageKey(key);
    const row = await this.db
      .selectFrom('sealed_records')
      .select(['version', 'nonce', 'ciphertext'])
      .where('domain', '=', this.domain)
      .where('key', '=', key)
      .executeTakeFirst();
    return row === undefined ? undefined : this.#open(key, row);
  }

  /** Seals and upserts `value` at `key`. */
  async put(key: string, value: Uint8Array): Promise<void> {
    assertStorageKey(key);
    if (!(value instanceof Uint8Array)) throw new AivyxError('Config', `value for ${this.domain}/${key} must be a Uint8Array`);
    await this.db.transaction().execute(async (tx) => {
      // FOR SHARE: a rotation bumping the write version waits for in-flight puts, and every put
      // after the bump seals with the new version, so one rotation pass cannot miss a row.
      const { write_version: version } = await tx
        .selectFrom('storage_rotation')
        .select('write_version')
        .where('id', '=', 1)
        .forShare()
        .executeTakeFirstOrThrow();
      const box = sealRecord(this.keys.subkey(this.domain, version), this.domain, key, version, value);
      await tx
        .insertInto('sealed_records')
        .values({ domain: this.domain, key, version, nonce: asBuffer(box.nonce), ciphertext: asBuffer(box.ciphertext) })
        .onConflict((oc) =>
          oc.columns(['domain', 'key']).doUpdateSet((eb) => ({
            version: eb.ref('excluded.version'),
            nonce: eb.ref('excluded.nonce'),
            ciphertext: eb.ref('excluded.ciphertext'),
            updated_at: sql<Date>`now()`,
          })),
        )
        .execute();
    });
  }

  /** Deletes `key`; true when a row existed. */
  async delete(key: string): Promise<boolean> {
    assertStorageKey(key);
    const r = await this.db.deleteFrom('sealed_records').where('domain', '=', this.domain).where('key', '=', key).executeTakeFirst();
    return r.numDeletedRows > 0n;
  }

  /** Keyset-paginated prefix scan; each batch is fetched only when the previous one is consumed. */
  async *scan(prefix: string, opts: ScanOptions = {}): AsyncGenerator<{ key: string; value: Uint8Array }> {
    if (typeof prefix !== 'string' || prefix.includes('\u0000'))
      throw new AivyxError('Config', `invalid scan prefix ${JSON.stringify(prefix)}`);
    const batchSize = opts.batchSize ?? 100;
    if (!Number.isInteger(batchSize) || batchSize < 1)
      throw new AivyxError('Config', `scan batchSize must be a positive integer, got ${batchSize}`);
    let after: string | undefined;
    for (;;) {
      let q = this.db
        .selectFrom('sealed_records')
        .select(['key', 'version', 'nonce', 'ciphertext'])
        .where('domain', '=', this.domain)
        // Under collation "C" every key with the prefix sorts at or after it, contiguously, so
        // `key >= prefix` lets the primary key index start there and starts_with ends it.
        .where('key', '>=', prefix)
        .where(sql<boolean>`starts_with(key, ${prefix})`);
      if (after !== undefined) q = q.where('key', '>', after);
      const rows = await q.orderBy('key').limit(batchSize).execute();
      for (const row of rows) yield { key: row.key, value: this.#open(row.key, row) };
      if (rows.length < batchSize) return;
      after = rows[rows.length - 1]!.key;
    }
  }

  /** Parsed JSON at `key`, or undefined. */
  async getJson<T>(key: string): Promise<T | undefined> {
    const bytes = await this.get(key);
    if (bytes === undefined) return undefined;
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as T;
    } catch (cause) {
      // The row authenticated, so this is a writer that used put() with non-JSON bytes.
      throw new AivyxError('Storage', `${this.domain}/${key} does not hold JSON`, { cause, detail: { domain: this.domain, key } });
    }
  }

  /** Stores `value` as UTF-8 JSON. */
  async putJson(key: string, value: unknown): Promise<void> {
    const text = JSON.stringify(value);
    if (text === undefined) throw new AivyxError('Config', `value for ${this.domain}/${key} is not JSON-serializable`);
    await this.put(key, new TextEncoder().encode(text));
  }

  /** Opens a fetched row under the subkey of the version it records. */
  #open(key: string, row: { version: number; nonce: Uint8Array; ciphertext: Uint8Array }): Uint8Array {
    const subkey = this.keys.subkey(this.domain, row.version);
    return openRecord(subkey, this.domain, key, row.version, { nonce: toPlain(row.nonce), ciphertext: toPlain(row.ciphertext) });
  }
}
