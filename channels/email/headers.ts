/**
 * Header fields of a raw message: the unfolded fields in order, and a strict lexer for structured
 * ones (RFC 5322 §3.2). The lexer refuses what it cannot read unambiguously — an unbalanced
 * comment, an unclosed quote or `<`, a stray `)` — instead of guessing, because the fields it
 * reads (Received, Authentication-Results) decide whether SPF counts.
 */

/** An unfolded header of a raw message, in order. */
export interface RawHeader {
  name: string;
  value: string;
}

/** The header fields of a raw RFC 5322 message, unfolded, top first. */
export function rawHeaders(raw: Buffer): RawHeader[] {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const block = end < 0 ? text : text.slice(0, end);
  const out: RawHeader[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && out.length > 0) out[out.length - 1]!.value += ` ${line.trim()}`;
    else {
      const i = line.indexOf(':');
      if (i > 0) out.push({ name: line.slice(0, i).trim().toLowerCase(), value: line.slice(i + 1).trim() });
    }
  }
  return out;
}

/** One token of a structured header field. */
export type HeaderToken =
  | { kind: 'word'; text: string }
  /** A comment's text without its outer parentheses (nested comments kept verbatim). */
  | { kind: 'comment'; text: string }
  | { kind: 'semi' }
  | { kind: 'equals' };

/** Splits `value` into tokens; undefined when it is not well-formed. */
export function headerTokens(value: string): HeaderToken[] | undefined {
  const out: HeaderToken[] = [];
  let word = '';
  const flush = (): void => {
    if (word) out.push({ kind: 'word', text: word });
    word = '';
  };
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n') flush();
    else if (c === ';' || c === '=') {
      flush();
      out.push({ kind: c === ';' ? 'semi' : 'equals' });
    } else if (c === ')') return undefined;
    else if (c === '(') {
      flush();
      let depth = 1;
      let text = '';
      for (i++; i < value.length && depth > 0; i++) {
        const d = value[i]!;
        if (d === '\\') {
          // A quoted-pair: the next character is literal (and cannot open or close a comment).
          if (++i >= value.length) return undefined;
          text += value[i]!;
          continue;
        }
        if (d === '(') depth++;
        else if (d === ')' && --depth === 0) break;
        text += d;
      }
      if (depth !== 0) return undefined;
      out.push({ kind: 'comment', text: text.replace(/\s+/g, ' ').trim() });
    } else if (c === '"') {
      // A quoted string is one word (its quotes dropped), wherever it sits.
      let text = '';
      for (i++; i < value.length && value[i] !== '"'; i++) {
        if (value[i] === '\\') i++;
        if (i < value.length) text += value[i]!;
      }
      if (i >= value.length) return undefined;
      word += text;
    } else if (c === '<') {
      // An angle address is one word: `for <a(b@c>` must not open a comment.
      const end = value.indexOf('>', i);
      if (end < 0) return undefined;
      word += value.slice(i, end + 1);
      i = end;
    } else word += c;
  }
  flush();
  return out;
}
