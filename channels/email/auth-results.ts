/**
 * SPF as an upstream verifier recorded it in an Authentication-Results header (RFC 8601). Only the
 * topmost such header counts, and only when its authserv-id is the one the operator configured:
 * our MX adds its header on top (and strips incoming ones claiming its id, RFC 8601 §5), so any
 * header a sender wrote sits below it.
 */
import { headerTokens, type RawHeader } from './headers.js';

/** An SPF result read from our verifier's header, or why none was read. */
export type UpstreamSpf = { ok: true; result: string; domain: string } | { ok: false; reason: string };

/** One `method=result ptype.prop=value …` entry of an Authentication-Results header. */
interface ResInfo {
  method: string;
  result: string;
  props: Map<string, string>;
}

/** The authserv-id and result entries of one header value; undefined when malformed. */
export function parseAuthResults(value: string): { authservId: string; results: ResInfo[] } | undefined {
  const tokens = headerTokens(value)?.filter((t) => t.kind !== 'comment');
  if (!tokens) return undefined;
  const sections: (typeof tokens)[] = [[]];
  for (const t of tokens) {
    if (t.kind === 'semi') sections.push([]);
    else sections[sections.length - 1]!.push(t);
  }
  const [head, ...rest] = sections;
  // `authserv-id [version]`.
  if (head?.[0]?.kind !== 'word' || head.length > 2) return undefined;
  const results: ResInfo[] = [];
  for (const section of rest) {
    if (section.length === 1 && section[0]?.kind === 'word' && section[0].text.toLowerCase() === 'none') continue;
    // method = result, then `name = value` pairs (reason and ptype.property).
    const pairs: [string, string][] = [];
    for (let i = 0; i < section.length; i += 3) {
      const [k, eq, v] = [section[i], section[i + 1], section[i + 2]];
      if (k?.kind !== 'word' || eq?.kind !== 'equals' || v?.kind !== 'word') return undefined;
      pairs.push([k.text.toLowerCase(), v.text]);
    }
    const [first, ...props] = pairs;
    if (!first) return undefined;
    results.push({ method: first[0], result: first[1].toLowerCase(), props: new Map(props) });
  }
  return { authservId: head[0].text.toLowerCase(), results };
}

/** The SPF result of the topmost Authentication-Results header, when it is `authservId`'s. */
export function upstreamSpf(headers: readonly RawHeader[], authservId: string): UpstreamSpf {
  const top = headers.find((h) => h.name === 'authentication-results');
  if (!top) return { ok: false, reason: 'SPF not evaluated: no Authentication-Results header' };
  const parsed = parseAuthResults(top.value);
  if (!parsed) return { ok: false, reason: 'SPF not evaluated: the topmost Authentication-Results header is malformed' };
  if (parsed.authservId !== authservId.toLowerCase())
    return {
      ok: false,
      reason: `SPF not evaluated: the topmost Authentication-Results header is from ${parsed.authservId}, not ${authservId.toLowerCase()}`,
    };
  const spf = parsed.results.filter((r) => r.method === 'spf');
  if (spf.length !== 1) return { ok: false, reason: `SPF not evaluated: ${authservId.toLowerCase()} recorded ${spf.length} SPF results` };
  const mailfrom = spf[0]!.props.get('smtp.mailfrom') ?? '';
  const domain = mailfrom
    .slice(mailfrom.lastIndexOf('@') + 1)
    .replace(/^<|>$/g, '')
    .toLowerCase();
  if (!domain) return { ok: false, reason: `SPF not evaluated: ${authservId.toLowerCase()} recorded no smtp.mailfrom` };
  return { ok: true, result: spf[0]!.result, domain };
}
