/**
 * CapabilitySet (seed Deliverable 4): an immutable, deduplicated, sorted list of scopes.
 * Sorted (by canonical string, code-unit order) rather than hashed because the set is
 * serialized into the HMAC-chained audit log and must be byte-identical across runs.
 */
import { AivyxError } from '../errors.js';
import { Scope } from './scope.js';

function toScope(s: Scope | string): Scope {
  return s instanceof Scope ? s : Scope.parse(s);
}

/** An immutable set of granted scopes. */
export class CapabilitySet {
  /** The scopes, deduplicated and sorted by canonical string. */
  readonly scopes: readonly Scope[];
  // Only scopes of the needed base can grant it (rule 1), so checks look at those alone.
  readonly #byBase = new Map<string, Scope[]>();

  private constructor(scopes: readonly Scope[]) {
    this.scopes = scopes;
    for (const s of scopes) {
      const list = this.#byBase.get(s.base);
      if (list) list.push(s);
      else this.#byBase.set(s.base, [s]);
    }
    Object.freeze(this);
  }

  /** The set that grants nothing. */
  static empty(): CapabilitySet {
    return EMPTY;
  }

  /** Builds a set, parsing strings (throws AivyxError('InvalidScope')), deduplicating and sorting. */
  static from(scopes: Iterable<Scope | string>): CapabilitySet {
    const byText = new Map<string, Scope>();
    for (const s of scopes) {
      const scope = toScope(s);
      byText.set(scope.toString(), scope);
    }
    const keys = [...byText.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return new CapabilitySet(Object.freeze(keys.map((k) => byText.get(k) as Scope)));
  }

  /** Reads the {@link CapabilitySet.toJSON} form back; throws AivyxError('InvalidScope') on bad input. */
  static fromJSON(s: readonly string[]): CapabilitySet {
    if (!Array.isArray(s) || s.some((x) => typeof x !== 'string')) {
      throw new AivyxError('InvalidScope', 'a capability set must be a JSON array of scope strings', {
        hint: 'write e.g. ["fs.read:/home/you/**", "llm.call"]',
      });
    }
    return CapabilitySet.from(s);
  }

  /** True when some held scope grants `needed` (strings are parsed; bad ones throw InvalidScope). */
  grants(needed: Scope | string): boolean {
    const n = toScope(needed);
    return this.#byBase.get(n.base)?.some((held) => n.isGrantedBy(held)) ?? false;
  }

  /**
   * The scopes granted by both sets. For every pair with the same base, the narrower one
   * is kept (if one grants the other); pairs where neither grants the other are dropped.
   * Sound because isGrantedBy is transitive: whatever a kept scope grants, both inputs
   * grant. Not complete: partially overlapping globs (say `fs.read:/a/x*` and `fs.read:/a/*y`) yield nothing.
   * With a ceiling holding a ▲ entry (e.g. `fs.read:/home/u/workspace/**`) and an agent holding bare
   * `fs.read`, the ▲ form is kept, so the effective set refuses bare `fs.read`.
   */
  intersect(other: CapabilitySet): CapabilitySet {
    const out: Scope[] = [];
    for (const a of this.scopes) {
      for (const b of other.scopes) {
        if (a.base !== b.base) continue;
        if (a.isGrantedBy(b)) out.push(a);
        else if (b.isGrantedBy(a)) out.push(b);
      }
    }
    return CapabilitySet.from(out);
  }

  /** True when every scope of this set is granted by `other`. */
  isSubsetOf(other: CapabilitySet): boolean {
    return this.scopes.every((s) => other.grants(s));
  }

  /** Canonical strings, sorted: the serialized form used in payloads and audit entries. */
  toJSON(): string[] {
    return this.scopes.map((s) => s.toString());
  }

  /** Number of distinct scopes. */
  get size(): number {
    return this.scopes.length;
  }
}

const EMPTY = CapabilitySet.from([]);
