/**
 * `aivyx audit verify|tail|pubkey|prove|consistency`: parsed here, answered by a running stack over
 * REST or, without one, by opening the database and keys directly; printed for a person or as JSON.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AivyxError } from '../../core/errors.js';
import { createAuditService, witnessPath, type InclusionProofReport } from '../../infra/audit/index.js';
import { reconciledAuditService } from '../../infra/tool-call-log.js';
import type { AivyxConfig } from '../../infra/config.js';
import { openDatabase, type Database } from '../../infra/db/index.js';
import { lockHome } from '../../infra/home-lock.js';
import { SealedStorage, unlockStorageKeyring } from '../../infra/storage/index.js';
import type { RestAuditPort } from '../rest/rest-server.js';
import { AUDIT_USAGE } from './audit-usage.js';
import { cliPassphrase } from './passphrase.js';
import { restJson, type RestTarget } from './rest-client.js';

/**
 * Opens the database and keys directly (no running stack needed) for a one-off command.
 * PGlite has one owner at a time, so the data directory is locked meanwhile; PostgreSQL needs no lock.
 */
export async function withStorage<T>(config: AivyxConfig, fn: (storage: SealedStorage) => Promise<T>, passphrase?: string): Promise<T> {
  return withDatabase(config, async (db) => {
    const keys = await unlockStorageKeyring(db, passphrase ?? (await cliPassphrase()));
    try {
      return await fn(SealedStorage.open(db, keys));
    } finally {
      keys.destroy();
    }
  });
}

/** Opens the database directly (the data directory locked for PGlite, as above) for `fn`. */
export async function withDatabase<T>(config: AivyxConfig, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  const lock = config.databaseUrl ? undefined : lockHome(config.home);
  try {
    const db = await openDatabase(config.databaseUrl ? { databaseUrl: config.databaseUrl } : { pgliteDir: join(config.home, 'pglite') });
    try {
      return await fn(db.db);
    } finally {
      await db.close();
    }
  } finally {
    lock?.release();
  }
}

/** One parsed `aivyx audit …` command. */
export type AuditCommand =
  | { sub: 'verify'; json: boolean; checkpoint?: { text: string; source: string } }
  | { sub: 'tail'; json: boolean; n: number }
  | { sub: 'pubkey'; json: boolean }
  | { sub: 'prove'; json: boolean; seq: number }
  | { sub: 'consistency'; json: boolean; checkpoint: string };

/** Reads a checkpoint argument: `-` is stdin, an existing path is a file, text with a newline is the note. */
function checkpointArg(arg: string, readStdin: () => Promise<string>): Promise<{ text: string; source: string }> {
  if (arg === '-') return readStdin().then((text) => ({ text, source: '(stdin)' }));
  if (existsSync(arg)) return Promise.resolve({ text: readFileSync(arg, 'utf8'), source: arg });
  if (arg.includes('\n')) return Promise.resolve({ text: arg, source: 'given' });
  throw new AivyxError('Config', `no checkpoint file ${arg}`, {
    hint: 'pass a file holding a signed checkpoint (e.g. copied from audit-checkpoints), - to read one from stdin, or its text',
  });
}

/** Parses the arguments after `aivyx audit`. */
export async function parseAuditCommand(args: string[], readStdin: () => Promise<string>): Promise<AuditCommand> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { n: { type: 'string', short: 'n' }, json: { type: 'boolean' }, checkpoint: { type: 'string' } },
  });
  const json = Boolean(values.json);
  switch (sub) {
    case 'verify':
      return { sub, json, ...(values.checkpoint === undefined ? {} : { checkpoint: await checkpointArg(values.checkpoint, readStdin) }) };
    case 'tail': {
      const n = values.n === undefined ? 20 : Number(values.n);
      if (!Number.isInteger(n) || n <= 0) throw new AivyxError('Config', `-n must be a positive integer, got "${values.n}"`);
      return { sub, json, n };
    }
    case 'pubkey':
      return { sub, json };
    case 'prove': {
      const seq = Number(positionals[0]);
      if (!Number.isSafeInteger(seq) || seq < 1)
        throw new AivyxError('Config', `aivyx audit prove needs an entry's sequence number, got "${positionals[0] ?? ''}"`, {
          hint: 'see `aivyx audit tail` for sequence numbers',
        });
      return { sub, json, seq };
    }
    case 'consistency': {
      if (positionals[0] === undefined)
        throw new AivyxError('Config', 'aivyx audit consistency needs an older checkpoint', { hint: AUDIT_USAGE });
      return { sub, json, checkpoint: (await checkpointArg(positionals[0], readStdin)).text };
    }
    default:
      throw new AivyxError('Config', `unknown audit command "${sub ?? ''}"`, { hint: AUDIT_USAGE });
  }
}

/** Runs a command against an audit port (a running stack's over REST, or a direct one). */
export async function runAuditCommand(cmd: AuditCommand, port: RestAuditPort): Promise<unknown> {
  const missing = (): never => {
    throw new AivyxError('Config', `aivyx audit ${cmd.sub} is not served by this aivyx`);
  };
  switch (cmd.sub) {
    case 'verify':
      return port.verify(cmd.checkpoint ? { checkpoint: cmd.checkpoint.text, source: cmd.checkpoint.source } : {});
    case 'tail':
      return port.tail(cmd.n);
    case 'pubkey':
      return await (port.pubkey ?? missing)();
    case 'prove':
      return (port.prove ?? missing)(cmd.seq);
    case 'consistency':
      return (port.consistency ?? missing)(cmd.checkpoint);
  }
}

/** The audit port of a running stack, over its REST channel. */
export function restAuditPort(target: RestTarget): RestAuditPort {
  return {
    verify: (o) =>
      o?.checkpoint === undefined ? restJson(target, 'GET', '/v1/audit/verify') : restJson(target, 'POST', '/v1/audit/verify', o),
    tail: (n) => restJson(target, 'GET', `/v1/audit/tail?n=${n}`),
    pubkey: () => restJson(target, 'GET', '/v1/audit/pubkey'),
    prove: (seq) => restJson(target, 'GET', `/v1/audit/prove?seq=${seq}`),
    consistency: (checkpoint) => restJson(target, 'POST', '/v1/audit/consistency', { checkpoint }),
  };
}

/** Runs `fn` with an audit port over the database and keys opened directly (no stack running). */
export function withDirectAuditPort<T>(config: AivyxConfig, passphrase: string, fn: (port: RestAuditPort) => Promise<T>): Promise<T> {
  return withStorage(
    config,
    (storage) => {
      const master = storage.keys.master;
      const auditKey = master.subkey('audit');
      return fn(
        reconciledAuditService(
          createAuditService({
            db: storage.db,
            auditKey,
            checkpointSeed: master.subkey('audit_checkpoint'),
            witnessPath: witnessPath(config.home),
          }),
          storage.db,
          auditKey,
        ),
      );
    },
    passphrase,
  );
}

/** The fields of a verify report the CLI prints (REST hands it over as JSON). */
interface VerifyView {
  ok: boolean;
  count: number;
  headSeq?: number;
  root?: string | null;
  failed?: 'chain' | 'tree' | 'checkpoint' | 'reconciliation';
  firstBadSeq?: number;
  reason?: string;
  checkpoints?: { matched: number; newest: { size: number; source: string } | null };
  witness?: string;
  warning?: string;
  reconciliation?: { written: number; findings: { kind: string; what: string }[] };
}

/** The lines `aivyx audit verify` prints: one per guarantee, the failed one saying why. */
function verifyLines(r: VerifyView): string[] {
  const rec = r.reconciliation;
  const wrote =
    rec && rec.written > 0
      ? [`wrote ${rec.written} owed tool-call entr${rec.written === 1 ? 'y' : 'ies'} (effects whose entry a crash had left owed)`]
      : [];
  const findings = (rec?.findings ?? []).map((f) => `  ${f.kind}: ${f.what}`);
  const agree = rec && findings.length === 0 ? ['tool calls and intents agree with the log'] : [];
  if (r.failed === 'reconciliation')
    return [
      ...wrote,
      ...guaranteeLines({ ...r, ok: true, failed: undefined }),
      `tool calls DISAGREE with the log: ${r.reason}`,
      ...findings,
    ];
  return [...wrote, ...guaranteeLines(r), ...(r.ok ? agree : findings)];
}

/** The chain, tree and checkpoint lines. */
function guaranteeLines(r: VerifyView): string[] {
  const verified = r.count === 1 ? '1 entry' : `${r.count} entries`;
  if (r.failed === 'chain') return [`audit chain BROKEN at seq ${r.firstBadSeq}: ${r.reason} (${r.count} entries verified before it)`];
  const chain = `audit chain OK: ${verified}${r.failed ? '' : `, head at seq ${r.headSeq}`}`;
  if (r.failed === 'tree') return [chain, `audit tree BROKEN at seq ${r.firstBadSeq}: ${r.reason}`];
  if (r.failed === 'checkpoint')
    return [...(r.count > 0 ? [chain, `audit tree OK over those ${verified}`] : []), `audit checkpoint FAILED: ${r.reason}`];
  const lines = [chain, `audit tree OK: root ${r.root} at size ${r.count}`];
  const newest = r.checkpoints?.newest;
  if (newest)
    lines.push(
      `audit checkpoints OK: ${r.checkpoints?.matched} agree with the log; the newest covers ${newest.size} entries (${newest.source})`,
    );
  else lines.push(`audit checkpoints: none — ${r.warning ?? 'the log is empty'}`);
  return lines;
}

/** Prints an audit result for a person (or as JSON) and returns the exit status. */
export function printAudit(cmd: AuditCommand, result: unknown, out: (s: string) => void): number {
  if (cmd.sub === 'tail') {
    const rows = result as Array<{ seq: number; recordedAt?: string; event: { type: string; turnId?: string } & Record<string, unknown> }>;
    for (const row of rows) {
      if (cmd.json) {
        out(`${JSON.stringify(row)}\n`);
        continue;
      }
      const { type, turnId, ...rest } = row.event;
      out(`#${row.seq}  ${row.recordedAt ?? ''}  ${type.padEnd(12)} ${turnId ?? ''}  ${JSON.stringify(rest)}\n`);
    }
    return 0;
  }
  if (cmd.json) {
    out(`${JSON.stringify(result)}\n`);
    return cmd.sub === 'verify' && !(result as VerifyView).ok ? 1 : 0;
  }
  switch (cmd.sub) {
    case 'verify': {
      const r = result as VerifyView;
      out(`${verifyLines(r).join('\n')}\n`);
      return r.ok ? 0 : 1;
    }
    case 'pubkey':
      out(`${(result as { vkey: string }).vkey}\n`);
      return 0;
    case 'prove': {
      const p = result as InclusionProofReport;
      out(
        [
          `entry ${p.seq} is leaf ${p.leafIndex} of the tree of ${p.treeSize} entries`,
          `leaf bytes (the entry's MACed body): ${p.entry}`,
          `leaf hash SHA-256(0x00 ‖ leaf bytes): ${p.leafHash}`,
          `inclusion proof (RFC 9162 §2.1.3, leaf to root, ${p.proof.length} hashes):`,
          ...p.proof,
          'checkpoint:',
          p.checkpoint,
        ].join('\n'),
      );
      return 0;
    }
    case 'consistency': {
      const c = result as { oldSize: number; newSize: number; proof: string[]; checkpoint: string };
      out(
        [
          `the log only grew: ${c.oldSize} → ${c.newSize} entries`,
          `consistency proof (RFC 9162 §2.1.4, ${c.proof.length} hashes):`,
          ...c.proof,
          'checkpoint:',
          c.checkpoint,
        ].join('\n'),
      );
      return 0;
    }
  }
}
