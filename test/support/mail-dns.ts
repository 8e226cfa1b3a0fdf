/** DNS for mail tests without DNS: DKIM keys made in the test and a map-backed mailauth resolver. */
import { generateKeyPairSync } from 'node:crypto';

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

