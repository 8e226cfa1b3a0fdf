/**
 * Where the Matrix crypto keeps its keys between starts. The Rust crypto stores its account (the
 * device's identity keys), Olm sessions and room keys in IndexedDB; Node has none, so the machine
 * runs on `fake-indexeddb` (in memory) and this file copies that database into sealed
 * `channel_state` (one record, `v8.serialize`d: IndexedDB's values are structured clones) after a
 * sync batch changed it, and back into memory before the machine opens it. The same device then
 * keeps the same keys across restarts: people's clients keep encrypting to it, and it can still
 * read what they sent while it was down.
 */
import 'fake-indexeddb/auto';
import { randomUUID } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import type { DomainHandle } from '../../infra/storage/index.js';

/** One object store: its shape and every record. */
interface StoreDump {
  name: string;
  keyPath: string | string[] | null;
  autoIncrement: boolean;
  indexes: { name: string; keyPath: string | string[]; unique: boolean; multiEntry: boolean }[];
  records: [unknown, unknown][];
}

/** One database: its version and stores. */
interface DatabaseDump {
  name: string;
  version: number;
  stores: StoreDump[];
}

/** The little of IndexedDB used here (the project compiles without the DOM library). */
interface Req<T> {
  result: T;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}
interface Index {
  keyPath: string | string[];
  unique: boolean;
  multiEntry: boolean;
}
interface Store {
  keyPath: string | string[] | null;
  autoIncrement: boolean;
  indexNames: Iterable<string>;
  index(name: string): Index;
  getAllKeys(): Req<unknown[]>;
  getAll(): Req<unknown[]>;
  put(value: unknown, key?: unknown): unknown;
  createIndex(name: string, keyPath: string | string[], opts: { unique: boolean; multiEntry: boolean }): unknown;
}
interface Tx {
  objectStore(name: string): Store;
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  error: unknown;
}
interface Db {
  version: number;
  objectStoreNames: Iterable<string>;
  transaction(name: string, mode: 'readonly' | 'readwrite'): Tx;
  createObjectStore(name: string, opts: { keyPath: string | string[] | null; autoIncrement: boolean }): Store;
  close(): void;
}
interface Factory {
  open(name: string, version?: number): Req<Db> & { onupgradeneeded: (() => void) | null };
  databases(): Promise<{ name?: string }[]>;
  deleteDatabase(name: string): Req<unknown>;
}
/** fake-indexeddb's factory, which `fake-indexeddb/auto` put where the Rust crypto looks for it. */
const idb = (): Factory => (globalThis as unknown as { indexedDB: Factory }).indexedDB;

const recordKey = (storeName: string) => `mx-crypto/${storeName}`;

const done = <T>(req: Req<T>): Promise<T> =>
  new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error instanceof Error ? req.error : new Error('IndexedDB request failed'));
  });

function open(name: string, version?: number, upgrade?: (db: Db) => void): Promise<Db> {
  const req = idb().open(name, version);
  if (upgrade) req.onupgradeneeded = () => upgrade(req.result);
  return done(req);
}

async function dumpStore(db: Db, name: string): Promise<StoreDump> {
  const store = db.transaction(name, 'readonly').objectStore(name);
  const [keys, values] = await Promise.all([done(store.getAllKeys()), done(store.getAll())]);
  const indexes = [...store.indexNames].map((i) => {
    const ix = store.index(i);
    return { name: i, keyPath: ix.keyPath, unique: ix.unique, multiEntry: ix.multiEntry };
  });
  return {
    name,
    keyPath: store.keyPath,
    autoIncrement: store.autoIncrement,
    indexes,
    records: keys.map((k, i): [unknown, unknown] => [k, values[i]]),
  };
}

/** The crypto's databases (`<storeName>::…`) as they are now. */
async function dump(storeName: string): Promise<DatabaseDump[]> {
  const out: DatabaseDump[] = [];
  for (const info of await idb().databases()) {
    if (!info.name?.startsWith(`${storeName}::`)) continue;
    const db = await open(info.name);
    try {
      const stores: StoreDump[] = [];
      for (const s of db.objectStoreNames) stores.push(await dumpStore(db, s));
      out.push({ name: info.name, version: db.version, stores });
    } finally {
      db.close();
    }
  }
  return out;
}

/** Recreates one dumped database in memory (same version, so the crypto finds nothing to migrate). */
async function restore(d: DatabaseDump): Promise<void> {
  const db = await open(d.name, d.version, (fresh) => {
    for (const s of d.stores) {
      const store = fresh.createObjectStore(s.name, { keyPath: s.keyPath, autoIncrement: s.autoIncrement });
      for (const ix of s.indexes) store.createIndex(ix.name, ix.keyPath, { unique: ix.unique, multiEntry: ix.multiEntry });
    }
  });
  try {
    for (const s of d.stores) {
      if (s.records.length === 0) continue;
      const tx = db.transaction(s.name, 'readwrite');
      const store = tx.objectStore(s.name);
      for (const [key, value] of s.records) store.put(value, s.keyPath === null ? key : undefined);
      await new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error instanceof Error ? tx.error : new Error('IndexedDB restore failed'));
      });
    }
  } finally {
    db.close();
  }
}

/** The crypto's keys kept in sealed channel state (one record per bot user and device). */
export interface CryptoKeyStore {
  /** The IndexedDB name the machine opens: new for each start, so that what it reads is the sealed copy. */
  storeName: string;
  /** Puts the sealed copy back into memory (before the machine opens it); false when there was none (a new device). */
  load(): Promise<boolean>;
  /** Seals the current databases into channel state. */
  save(): Promise<void>;
  /** Asks for the in-memory databases to go once the machine let go of them (a stopped channel keeps its keys sealed only). */
  drop(): Promise<void>;
}

/** A key store for the crypto of one device, sealed in `state` under `name`. */
export function cryptoKeyStore(state: DomainHandle, name: string): CryptoKeyStore {
  const storeName = `${name}#${randomUUID()}`;
  // Database names are kept without this start's prefix, and restored under the next start's.
  const local = (dbName: string) => dbName.slice(storeName.length);
  return {
    storeName,
    async load() {
      const sealed = await state.get(recordKey(name));
      if (!sealed) return false;
      for (const d of deserialize(sealed) as DatabaseDump[]) await restore({ ...d, name: `${storeName}${d.name}` });
      return true;
    },
    async save() {
      const dbs = (await dump(storeName)).map((d) => ({ ...d, name: local(d.name) }));
      await state.put(recordKey(name), new Uint8Array(serialize(dbs)));
    },
    async drop() {
      // Not awaited to the end: deletion waits for the machine's own connection, which it closes in its own time.
      for (const info of await idb().databases()) if (info.name?.startsWith(`${storeName}::`)) idb().deleteDatabase(info.name);
    },
  };
}
