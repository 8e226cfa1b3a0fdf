/**
 * Obtains the passphrase for a launcher/channel (never for storage): AIVYX_PASSPHRASE, then a
 * key file named by AIVYX_PASSPHRASE_FILE, then an interactive prompt. No silent default.
 */
import { readFileSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { AivyxError } from '../core/errors.js';

/** Where `resolvePassphrase` may look. */
export interface ResolvePassphraseOptions {
  env: Record<string, string | undefined>;
  /** Interactive prompt (only when a TTY is attached). */
  prompt?: () => Promise<string>;
}

const HOW = 'set AIVYX_PASSPHRASE, or AIVYX_PASSPHRASE_FILE=<file readable only by you (chmod 600)>, or run in a terminal to be prompted';

/** Returns the passphrase from env, key file or prompt, in that order; throws Config otherwise. */
export async function resolvePassphrase(opts: ResolvePassphraseOptions): Promise<string> {
  const direct = opts.env['AIVYX_PASSPHRASE'];
  if (direct !== undefined) {
    if (direct.length === 0) throw new AivyxError('Config', 'AIVYX_PASSPHRASE is set but empty', { hint: HOW });
    return direct;
  }
  const file = opts.env['AIVYX_PASSPHRASE_FILE'];
  if (file !== undefined && file !== '') return readKeyFile(file);
  if (opts.prompt) {
    const typed = await opts.prompt();
    if (typed.length === 0) throw new AivyxError('Config', 'empty passphrase entered', { hint: HOW });
    return typed;
  }
  throw new AivyxError('Config', 'no passphrase available: aivyx never uses a default passphrase', { hint: HOW });
}

/** Reads a key file, refusing one that group or others can read; trims one trailing newline. */
function readKeyFile(file: string): string {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch (cause) {
    throw new AivyxError('Config', `AIVYX_PASSPHRASE_FILE ${file} cannot be read: ${(cause as Error).message}`, { cause, hint: HOW });
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new AivyxError('Config', `key file ${file} is accessible by group/others (mode ${(mode & 0o777).toString(8)})`, {
      hint: `run: chmod 600 ${file}`,
    });
  }
  const text = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  if (text.length === 0) throw new AivyxError('Config', `key file ${file} is empty`, { hint: HOW });
  return text;
}

/** Asks `question` on a TTY and reads an answer without echoing it. */
export async function promptHidden(
  question: string,
  io: { input?: NodeJS.ReadableStream & { isTTY?: boolean }; output?: NodeJS.WritableStream } = {},
): Promise<string> {
  const input = io.input ?? process.stdin;
  const output = io.output ?? process.stderr;
  if (io.input === undefined && !process.stdin.isTTY) {
    throw new AivyxError('Config', 'cannot prompt for a passphrase: stdin is not a terminal', { hint: HOW });
  }
  let muted = false;
  // Forward the question, swallow everything echoed after it.
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input, output: sink, terminal: true });
  try {
    return await new Promise<string>((resolve, reject) => {
      rl.once('close', () => reject(new AivyxError('Cancelled', 'passphrase prompt closed')));
      rl.question(question, (answer) => {
        output.write('\n');
        resolve(answer);
      });
      muted = true;
    });
  } finally {
    rl.removeAllListeners('close');
    rl.close();
  }
}
