/** `aivyx audit verify|tail` without a running stack: open the database and keys directly. */
import { join } from 'node:path';
import { tailAuditEntries } from '../../infra/audit/index.js';
import { verifyAuditLog } from '../../infra/tool-call-log.js';
import type { AivyxConfig } from '../../infra/config.js';
import { openDatabase } from '../../infra/db/index.js';
import { lockHome } from '../../infra/home-lock.js';
import { SealedStorage, unlockStorageKeyring } from '../../infra/storage/index.js';
import { cliPassphrase } from './passphrase.js';

/**
 * Opens the database and keys directly (no running stack needed) for a one-off command.
 * PGlite has one owner at a time, so the data directory is locked meanwhile; PostgreSQL needs no lock.
 */
export async function withStorage<T>(config: AivyxConfig, fn: (storage: SealedStorage) => Promise<T>, passphrase?: string): Promise<T> {
  const lock = config.databaseUrl ? undefined : lockHome(config.home);
  try {
    const db = await openDatabase(config.databaseUrl ? { databaseUrl: config.databaseUrl } : { pgliteDir: join(config.home, 'pglite') });
    try {
      const keys = await unlockStorageKeyring(db.db, passphrase ?? (await cliPassphrase()));
      try {
        return await fn(SealedStorage.open(db.db, keys));
      } finally {
        keys.destroy();
      }
    } finally {
      await db.close();
    }
  } finally {
    lock?.release();
  }
}

/** Runs an audit command against the database named by the configuration. */
export async function runAuditDirect(config: AivyxConfig, sub: 'verify' | 'tail', n: number, passphrase: string): Promise<unknown> {
  return withStorage(
    config,
    async (storage) => {
      const auditKey = storage.keys.master.subkey('audit');
      return sub === 'verify' ? await verifyAuditLog(storage.db, auditKey) : await tailAuditEntries(storage.db, n);
    },
    passphrase,
  );
}

/** Prints an audit result for a person (or as JSON) and returns the exit status. */
export function printAudit(sub: 'verify' | 'tail', result: unknown, json: boolean): number {
  if (sub === 'verify') {
    const r = result as { ok: boolean; count: number; headSeq?: number; firstBadSeq?: number; reason?: string; reconciliation?: { written: number; findings: { kind: string; what: string }[] } };
    const rec = r.reconciliation;
    if (json) process.stdout.write(`${JSON.stringify(r)}\n`);
    else {
      if (rec && rec.written > 0) process.stdout.write(`wrote ${rec.written} owed tool-call entr${rec.written === 1 ? 'y' : 'ies'} (effects whose entry a crash had left owed)\n`);
      for (const f of rec?.findings ?? []) process.stdout.write(`  ${f.kind}: ${f.what}\n`);
      if (r.ok) process.stdout.write(`audit chain OK: ${r.count} entries, head at seq ${r.headSeq}; tool calls and intents agree with it\n`);
      else process.stdout.write(`audit log BROKEN at seq ${r.firstBadSeq}: ${r.reason} (${r.count} entries verified)\n`);
    }
    return r.ok ? 0 : 1;
  }
  const rows = result as Array<{ seq: number; recordedAt?: string; event: { type: string; turnId?: string } & Record<string, unknown> }>;
  for (const row of rows) {
    if (json) {
      process.stdout.write(`${JSON.stringify(row)}\n`);
      continue;
    }
    const { type, turnId, ...rest } = row.event;
    process.stdout.write(`#${row.seq}  ${row.recordedAt ?? ''}  ${type.padEnd(12)} ${turnId ?? ''}  ${JSON.stringify(rest)}\n`);
  }
  return 0;
}
