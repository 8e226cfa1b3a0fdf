/**
 * The audit operations behind `aivyx audit pubkey|prove|consistency|verify` and the REST routes:
 * the same code whether the CLI opened the database itself or asked a running stack.
 */
import type { Kysely } from 'kysely';
import { AivyxError } from '../../core/errors.js';
import type { Database } from '../db/database.js';
import { CheckpointSigner, openCheckpoint, splitNotes, type Checkpoint, type CheckpointVerifier } from './checkpoint.js';
import { auditBody, entryLeafHash, RECORDED_AT_ISO } from './entry.js';
import { checkConsistency, Frontier, rootFromInclusion } from './merkle.js';
import { StoredTree } from './tree-store.js';
import { tailAuditEntries, type AuditRow } from './audit-log.js';
import { checkAuditLog, type AuditLogReport, type CheckpointClaim } from './verify.js';
import { appendWitness, newestWitnessNote, readWitness } from './witness.js';

/** `aivyx audit pubkey`. */
export interface AuditPublicKey {
  /** The signed-note verifier key (give it to whoever should check checkpoints). */
  vkey: string;
  origin: string;
  keyId: string;
}

/** `aivyx audit prove <seq>`: entry `seq` is leaf `seq - 1` of the checkpointed tree. */
export interface InclusionProofReport {
  seq: number;
  leafIndex: number;
  treeSize: number;
  /** The leaf bytes: the entry's MACed body (canonical JSON), as UTF-8 text. */
  entry: string;
  /** Base64 SHA-256(0x00 ‖ entry). */
  leafHash: string;
  /** Base64 sibling hashes, leaf to root (RFC 9162 §2.1.3). */
  proof: string[];
  /** The signed checkpoint whose root the proof leads to. */
  checkpoint: string;
}

/** `aivyx audit consistency <old checkpoint>`: the old tree is a prefix of the current one. */
export interface ConsistencyProofReport {
  oldSize: number;
  newSize: number;
  /** Base64 hashes (RFC 9162 §2.1.4). */
  proof: string[];
  /** The signed checkpoint the proof leads to. */
  checkpoint: string;
}

/** `aivyx audit verify`: the log's report plus where checkpoints were looked for. */
export interface WitnessedAuditReport extends AuditLogReport {
  /** The witness file consulted. */
  witness: string;
  /** Set when no checkpoint was available: a truncated tail could then go unnoticed. */
  warning?: string;
}

/** What the service needs: the database, the chain key, the checkpoint key seed, the witness file. */
export interface AuditServiceOptions {
  db: Kysely<Database>;
  auditKey: Uint8Array;
  /** The `audit_checkpoint` subkey (an Ed25519 seed). */
  checkpointSeed: Uint8Array;
  witnessPath: string;
  /** Seconds since the epoch (tests pin it). */
  now?: () => number;
}

/** The audit operations of one install. */
export interface AuditService {
  readonly verifier: CheckpointVerifier;
  pubkey(): AuditPublicKey;
  /** A checkpoint of the current log, signed and witnessed if the log grew since the newest one. */
  checkpoint(): Promise<Checkpoint>;
  prove(seq: number): Promise<InclusionProofReport>;
  consistency(oldCheckpoint: string): Promise<ConsistencyProofReport>;
  verify(opts?: { checkpoint?: string; source?: string }): Promise<WitnessedAuditReport>;
  /** The newest `n` entries, oldest first. */
  tail(n: number): Promise<AuditRow[]>;
}

/** Creates the service; checkpoints are serialized within the process. */
export function createAuditService(opts: AuditServiceOptions): AuditService {
  const { db, witnessPath } = opts;
  const signer = new CheckpointSigner(opts.checkpointSeed);
  const verifier = signer.verifier;
  const now = opts.now ?? (() => Math.floor(Date.now() / 1000));
  let chain: Promise<unknown> = Promise.resolve();

  /** The newest checkpoint in the witness file, if any (it must open under our key). */
  function newestWitnessed(): Checkpoint | undefined {
    const note = newestWitnessNote(witnessPath);
    return note === undefined ? undefined : openCheckpoint(note, verifier, `in ${witnessPath} (the newest)`);
  }

  async function checkpointNow(): Promise<Checkpoint> {
    const head = await db.selectFrom('audit_head').select(['seq', 'frontier']).where('id', '=', 1).executeTakeFirstOrThrow();
    const size = Number(head.seq);
    const root = Frontier.decode(size, head.frontier).root();
    const last = newestWitnessed();
    if (last && last.size === size && last.root.equals(root)) return last;
    // Never sign a tree that does not extend what we signed before (tlog-checkpoint §Signatures):
    // the stored tree must prove the step from the newest witnessed checkpoint to this root.
    const refuse = (why: string): never => {
      throw new AivyxError('Audit', `refusing to sign a checkpoint: ${why}`, {
        hint: `run \`aivyx audit verify\`; if the database was restored on purpose, move ${witnessPath} aside to start a new witness file`,
        detail: { witnessed: last?.size, size },
      });
    };
    const tree = new StoredTree(db, size);
    if (last) {
      if (size < last.size)
        refuse(
          `the log has ${size} entries but the newest witnessed checkpoint has ${last.size} (entries were removed, or the database was restored from an older backup)`,
        );
      let proof: Buffer[] = [];
      try {
        proof = await tree.consistencyProof(last.size);
      } catch (e) {
        refuse(`the stored tree cannot prove it extends the newest witnessed checkpoint (${e instanceof Error ? e.message : String(e)})`);
      }
      if (!checkConsistency(last.size, last.root, size, root, proof)) {
        refuse(
          `the log of ${size} entries does not extend the newest witnessed checkpoint (size ${last.size}): entries 1–${last.size} were rewritten, or the database was restored from a backup that diverges from it`,
        );
      }
    } else if (!(await tree.root()).equals(root)) {
      refuse(`the head's tree edge disagrees with the stored tree of ${size} entries`);
    }
    const cp = signer.sign(size, root, now());
    appendWitness(witnessPath, cp.text);
    return cp;
  }

  /** One checkpoint at a time per process, each after the previous one settled. */
  function checkpoint(): Promise<Checkpoint> {
    const run = chain.then(checkpointNow, checkpointNow);
    chain = run.catch(() => undefined);
    return run;
  }

  // Methods never use `this`: the REST channel and the CLI call them unbound.
  return {
    verifier,
    pubkey: () => ({ vkey: verifier.vkey, origin: verifier.origin, keyId: verifier.keyId.toString('hex') }),

    checkpoint,

    async prove(seq) {
      if (!Number.isSafeInteger(seq) || seq < 1) throw new AivyxError('Config', `an entry is a positive sequence number, not "${seq}"`);
      const cp = await checkpoint();
      if (seq > cp.size) throw new AivyxError('NotFound', `entry ${seq} is not in the log (it has ${cp.size} entries)`);
      const row = await db
        .selectFrom('audit_entries')
        .select(['idem_key', 'event', RECORDED_AT_ISO.as('at')])
        .where('seq', '=', seq)
        .executeTakeFirst();
      if (!row) throw new AivyxError('Audit', `entry ${seq} is missing from the audit log`, { hint: 'run `aivyx audit verify`' });
      const entry = auditBody(seq, row.idem_key, row.at, row.event);
      const leaf = entryLeafHash(entry);
      const proof = await new StoredTree(db, cp.size).inclusionProof(seq - 1);
      // Hand out nothing that does not check: a proof that fails here means the stored tree is damaged.
      if (!rootFromInclusion(leaf, seq - 1, cp.size, proof)?.equals(cp.root)) {
        throw new AivyxError('Audit', `the stored tree does not prove entry ${seq} against checkpoint ${cp.size}`, {
          hint: 'run `aivyx audit verify`',
        });
      }
      return {
        seq,
        leafIndex: seq - 1,
        treeSize: cp.size,
        entry,
        leafHash: leaf.toString('base64'),
        proof: proof.map((p) => p.toString('base64')),
        checkpoint: cp.text,
      };
    },

    async consistency(oldText) {
      const found = splitNotes(oldText.endsWith('\n') ? oldText : `${oldText}\n`).notes;
      const first = found[0];
      if (!first)
        throw new AivyxError('Config', 'no signed checkpoint found in the text given', {
          hint: 'pass a checkpoint file (e.g. a copy of one from audit-checkpoints) or its text',
        });
      const old = openCheckpoint(first.text, verifier, 'given');
      const cp = await checkpoint();
      if (old.size > cp.size)
        throw new AivyxError(
          'Audit',
          `checkpoint given (size ${old.size}) is ahead of the log, which has ${cp.size} entries: entries ${cp.size + 1}–${old.size} were removed`,
        );
      const tree = new StoredTree(db, cp.size);
      const proof = await tree.consistencyProof(old.size);
      if (!checkConsistency(old.size, old.root, cp.size, cp.root, proof)) {
        throw new AivyxError(
          'Audit',
          `the log does not extend the checkpoint given (size ${old.size}): entries 1–${old.size} were rewritten since it was signed`,
          { hint: 'run `aivyx audit verify --checkpoint <that file>`' },
        );
      }
      return { oldSize: old.size, newSize: cp.size, proof: proof.map((p) => p.toString('base64')), checkpoint: cp.text };
    },

    tail: (n) => tailAuditEntries(db, n),

    async verify(o = {}) {
      const claims: CheckpointClaim[] = [];
      const fromText = (text: string, label: (n: { index: number; line: number }) => string) => {
        for (const n of splitNotes(text).notes) {
          const c = openCheckpoint(n.text, verifier, label(n));
          claims.push({ size: c.size, root: c.root, source: label(n), ...(c.time === undefined ? {} : { time: c.time }) });
        }
      };
      const failedCheckpoint = (e: unknown): WitnessedAuditReport => {
        if (!(e instanceof AivyxError) || e.kind !== 'Audit') throw e;
        return {
          ok: false,
          count: 0,
          headSeq: 0,
          root: null,
          failed: 'checkpoint',
          reason: e.message,
          checkpoints: { matched: 0, newest: null },
          witness: witnessPath,
        };
      };
      try {
        for (const n of readWitness(witnessPath).notes) fromText(n.text, () => `#${n.index} of ${witnessPath} (line ${n.line})`);
        if (o.checkpoint !== undefined) {
          const text = o.checkpoint.endsWith('\n') ? o.checkpoint : `${o.checkpoint}\n`;
          if (splitNotes(text).notes.length === 0) throw new AivyxError('Audit', `checkpoint ${o.source ?? 'given'} is not a signed note`);
          fromText(text, (n) => (o.source ?? 'given') + (n.index > 1 ? ` #${n.index}` : ''));
        }
      } catch (e) {
        return failedCheckpoint(e);
      }
      const report = await checkAuditLog(db, opts.auditKey, { checkpoints: claims });
      const out: WitnessedAuditReport = { ...report, witness: witnessPath };
      if (claims.length === 0 && report.count > 0)
        out.warning = `no checkpoint found (${witnessPath} is missing or empty): a truncated tail cannot be detected`;
      return out;
    },
  };
}
