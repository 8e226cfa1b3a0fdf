/**
 * What the memory tools share (docs/MEMORY.md): where an entry lives or what a recall/forget is
 * filtered to, the time range, and the scope qualifier derived from them.
 */
import { z } from 'zod';
import { fieldError } from './define-tool.js';
import { booleanField, patternField, says } from './fields.js';

/**
 * Where a memory entry lives, or what a recall/forget is filtered to. The scope qualifier of a
 * call is derived from it (see {@link memoryQualifier}); `public` entries form their own space.
 */
export interface MemoryFilter {
  session?: string;
  /** Lower-cased. */
  topic?: string;
  public?: boolean;
}

/** Longest entry a write accepts (characters): memory holds notes, not documents. */
export const MEMORY_MAX_TEXT = 8000;
/** Most entries one recall returns. */
export const MEMORY_MAX_LIMIT = 50;
/** Entries a recall returns when it does not say. */
export const MEMORY_DEFAULT_LIMIT = 10;

// No '*', '?' or ':' in names: a name must never turn the needed scope into a glob or forge
// the `session:<s>:topic:<t>` shape (a session called "a:topic:b").
const MEMORY_NAME = /^[A-Za-z0-9._-]{1,128}$/;
/** A memory id: `m_` and 32 hex digits. */
export const MEMORY_ID = /^m_[0-9a-f]{32}$/;
// Date.parse also reads loose forms ("Dec 1"); only ISO-8601 dates/instants are accepted.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

const name = (field: string, description: string) =>
  patternField(field, MEMORY_NAME, 'must be 1-128 letters, digits, ".", "_" or "-"', description, 'no spaces, ":" or wildcards').optional();

/** The filter fields, in the order the model is shown them (built when a definition's input is). */
export const memoryFilterFields = () => ({
  session: name('session', 'Letters, digits, . _ -'),
  topic: name('topic', 'Letters, digits, . _ -'),
  public: booleanField('public', 'Public notes (no session).').optional(),
});

/** Epoch milliseconds or an ISO-8601 time, as epoch ms. */
function instantField(field: string, description: string) {
  const m = says(`"${field}" must be epoch milliseconds or an ISO-8601 time`, 'e.g. 2026-12-01T00:00:00Z or 1796083200000');
  return z
    .union([z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), z.string().regex(ISO_INSTANT)], { error: m })
    .describe(description)
    .transform((v, ctx) => {
      const ms = typeof v === 'number' ? v : Date.parse(v);
      if (Number.isFinite(ms)) return ms;
      ctx.addIssue({ code: 'custom', message: m });
      return z.NEVER;
    })
    .optional();
}

/** The time-range fields: `from` inclusive, `to` exclusive. */
export const memoryRangeFields = () => ({
  from: instantField('from', 'From (inclusive): epoch ms or ISO-8601.'),
  to: instantField('to', 'To (exclusive): epoch ms or ISO-8601.'),
});

/** The canonical filter: topics lower-cased; a public entry has no session. */
export function memoryFilter(rec: {
  session?: string | undefined;
  topic?: string | undefined;
  public?: boolean | undefined;
}): MemoryFilter {
  const out: MemoryFilter = {};
  if (rec.session !== undefined) out.session = rec.session;
  if (rec.topic !== undefined) out.topic = rec.topic.toLowerCase();
  if (rec.public === true) {
    // Public entries have no session: a public grant must not reach into anyone's session.
    if (rec.session !== undefined) throw fieldError('public entries have no session', 'drop "session" or "public"');
    out.public = true;
  }
  return out;
}

/** The canonical range; `from` must come before `to`. */
export function memoryRange(rec: { from?: number | undefined; to?: number | undefined }): { from?: number; to?: number } {
  const { from, to } = rec;
  if (from !== undefined && to !== undefined && from >= to) throw fieldError('"from" must be before "to"', '"to" is exclusive');
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
}

/**
 * The scope qualifier of a memory place or filter, most specific partition first:
 * `scope:public:<topic>` (`scope:public:*` for every public topic), `session:<s>:topic:<t>`,
 * `session:<s>`, `topic:<t>`, or undefined (the bare scope: all of memory). Public wins because
 * that is exactly what the Untrusted ceiling (`memory.read:scope:public:*`) can be granted.
 */
export function memoryQualifier(f: MemoryFilter): string | undefined {
  if (f.public) return `scope:public:${f.topic ?? '*'}`;
  if (f.session !== undefined && f.topic !== undefined) return `session:${f.session}:topic:${f.topic}`;
  if (f.session !== undefined) return `session:${f.session}`;
  if (f.topic !== undefined) return `topic:${f.topic}`;
  return undefined;
}
