/** DNS for mail tests without DNS: DKIM keys made in the test and a map-backed mailauth resolver. */
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign, dkimVerify } from 'mailauth';

/** The DKIM selector of the test sender domain. */
export const SELECTOR = 'test2026';

/** A DNS map for mailauth's `resolver` option: `name TYPE` → records. Unknown names are NXDOMAIN. */
export type DnsMap = Map<string, string[][]>;

/** A mailauth resolver over `map` (no real DNS). */
export function mapResolver(map: DnsMap) {
  return async (name: string, type: string): Promise<string[][]> => {
    const hit = map.get(`${name.toLowerCase()} ${type.toUpperCase()}`);
    if (hit) return hit;
    throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  };
}

/** An RSA key for `domain` with its DKIM TXT record added to `dns`. */
export function dkimKey(domain: string, dns: DnsMap): string {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns.set(`${SELECTOR}._domainkey.${domain} TXT`, [[`v=DKIM1; k=rsa; p=${p}`]]);
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * `raw` with a relaxed/relaxed DKIM signature of `domain` whose `l=` covers exactly its current
 * body: anything appended afterwards is outside the signature (the `l=` attack).
 */
export async function signWithBodyLength(raw: string | Buffer, domain: string, key: string, dns: DnsMap): Promise<string> {
  const sig = { signingDomain: domain, selector: SELECTOR, privateKey: key };
  // Sign once to learn the canonical body length, then sign again with that length as l=.
  const probe = await dkimSign(raw, { ...sig, canonicalization: 'relaxed/relaxed', signatureData: [sig] });
  const verified = await dkimVerify(Buffer.concat([Buffer.from(probe.signatures), Buffer.from(raw)]), { resolver: mapResolver(dns) });
  const length = (verified.results[0] as { canonBodyLengthTotal?: number } | undefined)?.canonBodyLengthTotal;
  if (length === undefined) throw new Error('mailauth reported no canonical body length');
  const signed = await dkimSign(raw, { ...sig, canonicalization: 'relaxed/relaxed', signatureData: [{ ...sig, maxBodyLength: length }] });
  if (signed.errors.length > 0) throw new Error(`signing failed: ${JSON.stringify(signed.errors)}`);
  return signed.signatures + Buffer.from(raw).toString('latin1');
}
