/**
 * The witness file: `$AIVYX_HOME/audit-checkpoints`, every checkpoint this install signed, appended
 * one after another (blank-line separated) and synced, outside the database. A database restored
 * or rolled back behind it no longer matches it (docs/AUDIT.md).
 */
import { closeSync, existsSync, fdatasyncSync, fstatSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { splitNotes, type FoundNote } from './checkpoint.js';

/** The witness file's name under the data directory. */
export const WITNESS_FILE = 'audit-checkpoints';

/** The witness file of a data directory. */
export function witnessPath(home: string): string {
  return join(home, WITNESS_FILE);
}

/** Appends one signed note and syncs it to disk before returning (mode 0600 when created). */
export function appendWitness(path: string, note: string): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSync(fd, `${note}\n`);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Every note in the witness file (none when it does not exist), and how many were torn. */
export function readWitness(path: string): { notes: FoundNote[]; incomplete: number } {
  if (!existsSync(path)) return { notes: [], incomplete: 0 };
  return splitNotes(readFileSync(path, 'utf8'));
}

/** How much of the file's end `newestWitnessNote` reads: several checkpoints' worth. */
const TAIL_BYTES = 8192;

/** The last complete note of the witness file, reading only its end; undefined when there is none. */
export function newestWitnessNote(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    let text = buf.toString('utf8');
    // Start at a note boundary unless we read from the beginning: a blank line not followed by a
    // signature line (the blank line inside a note is).
    if (start > 0) {
      let at = text.indexOf('\n\n');
      while (at >= 0 && text.startsWith('\u2014 ', at + 2)) at = text.indexOf('\n\n', at + 2);
      text = at >= 0 ? text.slice(at + 2) : '';
    }
    const { notes } = splitNotes(text);
    return notes[notes.length - 1]?.text;
  } finally {
    closeSync(fd);
  }
}
