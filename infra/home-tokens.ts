/** The bearer tokens kept in the data directory (REST channel, codec server): created once, readable only by this user. */
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The REST channel's bearer token, created on first start and readable only by this user. */
export function restToken(home: string): string {
  const file = join(home, 'rest-token');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/** The codec server's bearer token, created once (never overwritten), readable only by this user. */
export function codecToken(home: string): string {
  const file = join(home, 'codec-token');
  try {
    closeSync(openSync(file, 'wx', 0o600));
    writeFileSync(file, randomBytes(32).toString('hex'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return readFileSync(file, 'utf8').trim();
}
