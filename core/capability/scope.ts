/**
 * The Scope type (seed Deliverable 4): `base` or `base:qualifier`, parsed once, stored in
 * canonical form. Unknown and reserved bases fail at parse time, never at check time, and
 * `isGrantedBy` is the only authoritative check.
 *
 * The qualifier kind is fixed by the base (see qualifier.ts for why that is stricter than
 * the seed's shape-sniffing). The qualifier is everything after the FIRST ':' so it may
 * itself contain ':' (`memory.read:scope:public:*`, URLs).
 */
import { AivyxError } from '../errors.js';
import { canonicalQualifier, qualifierGrants, type QualifierKind } from './qualifier.js';

/** Qualifier kind of every active base: the v1 namespace plus git.*, mission.*, mcp.call, kernel.data_dir, skills.*, graph.*, agent.delegate and agent.terminate (34 bases). */
const BASE_KINDS: Readonly<Record<string, QualifierKind>> = Object.freeze({
  'fs.read': 'path',
  'fs.write': 'path',
  'fs.delete': 'path',
  'fs.metadata': 'path',
  'net.fetch': 'url',
  'net.post': 'url',
  'net.dns': 'domain',
  'shell.exec': 'allowlist',
  'shell.spawn': 'allowlist',
  'llm.call': 'glob',
  'llm.embed': 'glob',
  'memory.read': 'glob',
  'memory.write': 'glob',
  'memory.forget': 'glob',
  'channel.send': 'glob',
  'channel.receive': 'glob',
  'audit.read': 'glob',
  'config.read': 'glob',
  'config.write': 'glob',
  'git.read': 'path',
  'git.write': 'path',
  'mission.create': 'glob',
  'mission.gate': 'glob',
  // Issue 12: what the assistant may do to missions that exist: `mission.list:own`, `mission.cancel:own`.
  'mission.list': 'glob',
  'mission.cancel': 'glob',
  // Amendment 2026-12-02-mcp-call-scope: `mcp.call:<server>/<tool>`, granted to no tier by default.
  'mcp.call': 'glob',
  // Amendment 2026-12-03-tier-policy-data-dir: what a call into the data directory needs; only Kernel holds it.
  'kernel.data_dir': 'path',
  // Issue 35 (seed Phase 110, Chapter Lattice): learned skills and the typed knowledge graph, Trusted only.
  // `graph.write` is ours: the seed names only graph.read; writing relations is an effect of its own.
  'skills.propose': 'glob',
  'skills.list': 'glob',
  'skills.invoke': 'glob',
  'graph.read': 'glob',
  'graph.write': 'glob',
  // Issue 33 (seed Nonagon): `agent.delegate:<specialist>` asks one owner-defined specialist (core/specialists.ts).
  'agent.delegate': 'glob',
  // `agent.terminate:<specialist>`: the owner stops one running specialist (app/owner-specialists.ts); no tool uses it.
  'agent.terminate': 'glob',
});

/** The scope base a tool call into the data directory resolves to (held by Kernel only, never by a channel tier). */
export const DATA_DIR_SCOPE_BASE = 'kernel.data_dir';

/** Bases where a trailing `**` never matches its own root (deleting `/x` is not "something under /x"). */
const ROOT_EXCLUDED_BASES: ReadonlySet<string> = new Set(['fs.delete']);

/** Every base a scope may use in v1, in taxonomy order. */
export const KNOWN_SCOPE_BASES: readonly string[] = Object.freeze(Object.keys(BASE_KINDS));

/** Bases named by the seed but not implemented in v1: parsing them fails. */
export const RESERVED_SCOPE_BASES: readonly string[] = Object.freeze([
  'agent.spawn',
  'schedule.create',
  'schedule.read',
  'schedule.delete',
  'schedule.run',
  'system.shutdown',
  'system.notify',
  'system.clipboard_read',
  'system.clipboard_write',
  'display.window_focus',
  'display.window_close',
  'display.screenshot',
  'federation.discover',
  'federation.call',
  'federation.accept',
]);

const BASE_SYNTAX = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** True when `base` is one of {@link KNOWN_SCOPE_BASES}. */
export function isKnownScopeBase(base: string): boolean {
  return Object.prototype.hasOwnProperty.call(BASE_KINDS, base);
}

/** The qualifier kind fixed for a known base; throws AivyxError('InvalidScope') otherwise. */
export function qualifierKindOf(base: string): QualifierKind {
  if (!isKnownScopeBase(base)) throw unknownBase(base);
  return BASE_KINDS[base] as QualifierKind;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length] as number;
}

function unknownBase(base: string): AivyxError {
  if (RESERVED_SCOPE_BASES.includes(base)) {
    return new AivyxError('InvalidScope', `scope base "${base}" is reserved, not available in v1`, {
      hint: 'no v1 tool may use it; build a narrower tool on an active base instead',
    });
  }
  let best: string | undefined;
  let bestD = 3; // suggest only close typos
  for (const known of KNOWN_SCOPE_BASES) {
    const d = editDistance(base, known);
    if (d < bestD) [best, bestD] = [known, d];
  }
  const message = best === undefined ? `unknown scope base "${base}"` : `unknown scope base "${base}" (did you mean ${best}?)`;
  return new AivyxError('InvalidScope', message, { hint: `known bases: ${KNOWN_SCOPE_BASES.join(', ')}` });
}

/** A parsed, canonical capability scope: `base` or `base:qualifier`. Immutable. */
export class Scope {
  /** Dotted base, one of {@link KNOWN_SCOPE_BASES}. */
  readonly base: string;
  /** Canonical qualifier, or undefined for the unqualified (whole-base) scope. */
  readonly qualifier: string | undefined;
  readonly #text: string;

  private constructor(base: string, qualifier: string | undefined) {
    this.base = base;
    this.qualifier = qualifier;
    this.#text = qualifier === undefined ? base : `${base}:${qualifier}`;
    Object.freeze(this);
  }

  /** Parses and canonicalizes; throws AivyxError('InvalidScope') with a hint a person can act on. */
  static parse(s: string): Scope {
    if (typeof s !== 'string')
      throw new AivyxError('InvalidScope', `scope must be a string, got ${typeof s}`, { hint: 'write a scope like fs.read:/home/you/**' });
    const colon = s.indexOf(':');
    const base = colon < 0 ? s : s.slice(0, colon);
    if (!BASE_SYNTAX.test(base)) {
      const shown = JSON.stringify(base);
      const hint =
        base !== base.trim()
          ? 'remove the surrounding whitespace'
          : base !== base.toLowerCase()
            ? `bases are lowercase: ${base.toLowerCase()}`
            : 'a base is lowercase dotted identifiers, e.g. fs.read';
      throw new AivyxError('InvalidScope', `malformed scope base ${shown} in scope ${JSON.stringify(s)}`, { hint });
    }
    if (!isKnownScopeBase(base)) throw unknownBase(base);
    if (colon < 0) return new Scope(base, undefined);
    const kind = BASE_KINDS[base] as QualifierKind;
    try {
      return new Scope(base, canonicalQualifier(kind, s.slice(colon + 1)));
    } catch (e) {
      if (e instanceof AivyxError) {
        throw new AivyxError('InvalidScope', `${base}: ${e.message}`, {
          ...(e.hint === undefined ? {} : { hint: e.hint }),
          detail: { scope: s, kind },
          cause: e,
        });
      }
      throw e;
    }
  }

  /** Like {@link Scope.parse} but returns undefined instead of throwing. */
  static tryParse(s: string): Scope | undefined {
    try {
      return Scope.parse(s);
    } catch {
      return undefined;
    }
  }

  /** Canonical string form: `base` or `base:qualifier`. */
  toString(): string {
    return this.#text;
  }

  /** JSON form is the canonical string (scopes travel as strings in payloads and audit). */
  toJSON(): string {
    return this.#text;
  }

  /** True when both scopes have the same canonical form. */
  equals(other: Scope): boolean {
    return this.#text === other.#text;
  }

  /**
   * True iff `held` grants this (needed) scope — the only authoritative check. Rules:
   * 1 bases match exactly; 2 unqualified held grants any; 4 qualified held never grants
   * unqualified needed; 3 otherwise the base's qualifier kind decides (for `fs.delete` a
   * trailing `**` never matches its own root).
   */
  isGrantedBy(held: Scope): boolean {
    if (held.base !== this.base) return false;
    if (held.qualifier === undefined) return true;
    if (this.qualifier === undefined) return false;
    return qualifierGrants(BASE_KINDS[this.base] as QualifierKind, this.qualifier, held.qualifier, {
      rootExcluded: ROOT_EXCLUDED_BASES.has(this.base),
    });
  }
}
