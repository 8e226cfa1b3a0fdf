/**
 * Signed checkpoints of the audit tree in the C2SP formats: a tlog-checkpoint body (origin, tree
 * size, base64 root, and one extension line `time <POSIX seconds>`) in a signed note with an Ed25519
 * signature (type 0x01) whose key name is the origin. Any tooling for those formats can check them
 * with the verifier key `aivyx audit pubkey` prints.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { AivyxError } from '../../core/errors.js';
import { HASH_SIZE } from './merkle.js';

/** RFC 8410 DER prefixes around a raw 32-byte Ed25519 seed / public key. */
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
/** The signed-note signature type of Ed25519. */
const ED25519_TYPE = 0x01;
/** The signature line prefix: em dash, space. */
const SIG_PREFIX = '\u2014 ';

/** A log's public identity: origin (also the key name), key ID, Ed25519 public key. */
export interface CheckpointVerifier {
  origin: string;
  keyId: Buffer;
  publicKey: Buffer;
  /** The signed-note verifier key: `<name>+<hex key ID>+<base64(0x01 ‖ public key)>`. */
  vkey: string;
}

/** A checkpoint whose signature by the expected key verified. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
  /** Signing time (POSIX seconds) from the `time` extension line, if present. */
  time?: number;
  /** The whole signed note. */
  text: string;
}

/** key ID = SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key)[:4] (signed-note). */
function keyIdOf(name: string, publicKey: Buffer): Buffer {
  return createHash('sha256')
    .update(name)
    .update('\n')
    .update(Buffer.from([ED25519_TYPE]))
    .update(publicKey)
    .digest()
    .subarray(0, 4);
}

/** The verifier for a raw public key: the origin is derived from the key, so it names this install. */
export function checkpointVerifier(publicKey: Buffer): CheckpointVerifier {
  const origin = `aivyx.local/audit/${createHash('sha256').update(publicKey).digest('hex').slice(0, 16)}`;
  const keyId = keyIdOf(origin, publicKey);
  return {
    origin,
    keyId,
    publicKey,
    vkey: `${origin}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([ED25519_TYPE]), publicKey]).toString('base64')}`,
  };
}

/** Parses a verifier key (`name+hexid+base64`); throws Config when it is not an Ed25519 vkey. */
export function parseVerifierKey(vkey: string): CheckpointVerifier {
  const [name, hexId, b64, extra] = vkey.trim().split('+');
  const raw = b64 === undefined ? Buffer.alloc(0) : Buffer.from(b64, 'base64');
  if (!name || !hexId || extra !== undefined || raw.length !== 33 || raw[0] !== ED25519_TYPE) {
    throw new AivyxError('Config', 'not an Ed25519 signed-note verifier key', {
      hint: 'expected <name>+<8 hex digits>+<base64>, as `aivyx audit pubkey` prints',
    });
  }
  const publicKey = raw.subarray(1);
  if (keyIdOf(name, publicKey).toString('hex') !== hexId.toLowerCase())
    throw new AivyxError('Config', 'verifier key ID does not match its name and key');
  return { origin: name, keyId: keyIdOf(name, publicKey), publicKey, vkey: vkey.trim() };
}

/** Signs checkpoints with an Ed25519 key made from a 32-byte seed (the `audit_checkpoint` subkey). */
export class CheckpointSigner {
  readonly #key: KeyObject;
  /** This log's public identity. */
  readonly verifier: CheckpointVerifier;

  constructor(seed: Uint8Array) {
    if (seed.length !== 32) throw new AivyxError('Crypto', 'an Ed25519 seed is 32 bytes');
    this.#key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
    const spki = createPublicKey(this.#key).export({ format: 'der', type: 'spki' });
    this.verifier = checkpointVerifier(Buffer.from(spki.subarray(spki.length - 32)));
  }

  /** The signed note for a tree of `size` entries with `root`, at `time` (POSIX seconds). */
  sign(size: number, root: Buffer, time: number): Checkpoint {
    const { origin, keyId } = this.verifier;
    const body = `${origin}\n${size}\n${root.toString('base64')}\ntime ${time}\n`;
    const signature = sign(null, Buffer.from(body, 'utf8'), this.#key);
    const text = `${body}\n${SIG_PREFIX}${origin} ${Buffer.concat([keyId, signature]).toString('base64')}\n`;
    return { origin, size, root, time, text };
  }
}

/** Whether `text` holds an ASCII control character other than newline (signed notes must not). */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 && c !== 0x0a) return true;
  }
  return false;
}

/** Splits a signed note into its text and signature lines; undefined when it is not one. */
function splitNote(note: string): { text: string; sigs: Array<{ name: string; sig: Buffer }> } | undefined {
  if (!note.endsWith('\n') || hasControlCharacter(note)) return undefined;
  const cut = note.lastIndexOf('\n\n');
  if (cut < 0) return undefined;
  const text = note.slice(0, cut + 1);
  const sigs: Array<{ name: string; sig: Buffer }> = [];
  for (const line of note.slice(cut + 2, -1).split('\n')) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/.exec(line);
    if (!m) return undefined;
    sigs.push({ name: m[1] as string, sig: Buffer.from(m[2] as string, 'base64') });
  }
  return sigs.length > 0 ? { text, sigs } : undefined;
}

/**
 * Opens a checkpoint against this log's key: the signature must be by this key and verify, and the
 * body must be a well-formed checkpoint of this origin. Throws Audit naming `source` and saying
 * which: not a checkpoint, another install's, or forged/altered.
 */
export function openCheckpoint(note: string, verifier: CheckpointVerifier, source: string): Checkpoint {
  const fail = (why: string, hint?: string): never => {
    throw new AivyxError('Audit', `checkpoint ${source} ${why}`, { detail: { checkpoint: source }, ...(hint ? { hint } : {}) });
  };
  const parts = splitNote(note);
  if (!parts) return fail('is not a signed note (text, a blank line, then "— <key name> <signature>" lines)');
  const lines = parts.text.slice(0, -1).split('\n');
  const [origin, sizeText, rootText, ...extensions] = lines;
  if (origin !== verifier.origin) {
    return fail(
      `is for log ${origin ?? '(none)'}, not this one (${verifier.origin}): a checkpoint from another install`,
      'compare with `aivyx audit pubkey`; each install has its own checkpoint key',
    );
  }
  const ours = parts.sigs.filter((s) => s.name === verifier.origin && s.sig.length === 68 && s.sig.subarray(0, 4).equals(verifier.keyId));
  if (ours.length === 0) return fail(`carries no signature by this log's key (${verifier.vkey}): forged, or from another install`);
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_ED25519, verifier.publicKey]), format: 'der', type: 'spki' });
  for (const s of ours) {
    if (!verify(null, Buffer.from(parts.text, 'utf8'), publicKey, s.sig.subarray(4)))
      return fail('has a signature that does not verify: it was forged or altered after signing');
  }
  if (!sizeText || !/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText)))
    return fail(`has a malformed tree size "${sizeText ?? ''}"`);
  const root = Buffer.from(rootText ?? '', 'base64');
  if (root.length !== HASH_SIZE || root.toString('base64') !== rootText) return fail('has a malformed root hash');
  if (extensions.some((l) => l.length === 0)) return fail('has an empty extension line');
  const timeLine = extensions.find((l) => l.startsWith('time '));
  const time = timeLine === undefined ? undefined : Number(timeLine.slice(5));
  return { origin, size: Number(sizeText), root, ...(time !== undefined && Number.isSafeInteger(time) ? { time } : {}), text: note };
}

/** One signed note found in a text holding several (a witness file, or a pasted checkpoint). */
export interface FoundNote {
  text: string;
  /** 1-based position among the notes. */
  index: number;
  /** 1-based line of its first line. */
  line: number;
}

/**
 * Splits text into signed notes: each is body lines, one blank line, then signature lines; notes are
 * separated by blank lines. A trailing note without signatures (a torn write) is reported apart.
 */
export function splitNotes(all: string): { notes: FoundNote[]; incomplete: number } {
  // Text after the last newline is a torn line; the note it belongs to then counts as incomplete.
  const lines = all.slice(0, all.lastIndexOf('\n') + 1).split('\n');
  const notes: FoundNote[] = [];
  let incomplete = 0;
  let i = 0;
  while (i < lines.length) {
    while (i < lines.length && lines[i] === '') i++;
    if (i >= lines.length) break;
    const first = i;
    while (i < lines.length && lines[i] !== '') i++;
    const body = lines.slice(first, i);
    const sigStart = i + 1;
    let j = sigStart;
    while (j < lines.length && (lines[j] as string).startsWith(SIG_PREFIX)) j++;
    if (j === sigStart || i >= lines.length) {
      incomplete++;
      i = Math.max(j, i + 1);
      continue;
    }
    notes.push({ text: `${body.join('\n')}\n\n${lines.slice(sigStart, j).join('\n')}\n`, index: notes.length + 1, line: first + 1 });
    i = j;
  }
  return { notes, incomplete };
}
