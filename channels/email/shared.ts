/** Small helpers the e-mail modules share. */
import { createHash } from 'node:crypto';
import type { AddressObject } from 'mailparser';

/** Channel instance name used in turn ids, session ids and the delivery registry. */
export const EMAIL_CHANNEL_NAME = 'email';

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');
/** A short stable key of a Message-ID, an address or an account (state keys never hold them in clear). */
export const short = (s: string | Buffer): string => sha(s).slice(0, 32);

/** Lower-cased addresses of a header. */
export function addresses(a: AddressObject | AddressObject[] | undefined): string[] {
  const list = Array.isArray(a) ? a : a ? [a] : [];
  return list.flatMap((o) => o.value.map((v) => (v.address ?? '').toLowerCase())).filter((s) => s.length > 0);
}
