/**
 * `memory.write`, `memory.recall`, `memory.forget`: the memory tools over a MemoryStore. Each call
 * appends its MemoryAccess audit entry before touching memory (the ToolCall entry follows from
 * runTool), and the audit only ever sees ids, scopes and keyed query tags — never memory text.
 */
import { memoryForgetTool } from '../../core/tools/memory-forget.js';
import { memoryRecallTool } from '../../core/tools/memory-recall.js';
import { memoryWriteTool } from '../../core/tools/memory-write.js';
import { flatLabel } from '../../core/taint.js';
import type { MemoryEntry, MemoryStore } from './memory-port.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Ports of the memory tools. */
export interface MemoryToolDeps {
  store: MemoryStore;
  /** Clock for new entries (tests pin it); default Date.now. A retried write keeps its first time. */
  now?: () => number;
}

/** Output of `memory.write`: the id and the stored time (ISO-8601). */
export interface MemoryWriteOutput {
  id: string;
  at: string;
}

/** One recalled entry as the model sees it: the time as ISO-8601, tags only when set. */
export type MemoryRecallEntry = Omit<MemoryEntry, 'at'> & { at: string };

/** Output of `memory.recall`. */
export interface MemoryRecallOutput {
  entries: MemoryRecallEntry[];
  more: boolean;
}

/** Output of `memory.forget`. */
export interface MemoryForgetOutput {
  forgotten: number;
}

function iso(ms: number | undefined): string {
  return ms === undefined ? 'any' : new Date(ms).toISOString();
}

/** The three memory tools, in catalog order. */
export function createMemoryTools(deps: MemoryToolDeps): ToolImplementation[] {
  const { store } = deps;
  const now = deps.now ?? Date.now;

  const write = implementTool(memoryWriteTool, {
    async run(req, ctx) {
      // Keyed by the activity, not the attempt: a retried write lands on the same id.
      const id = store.idFor(ctx.idemKey);
      await ctx.recordMemoryAccess({ operation: 'Write', scope: memoryWriteTool.scopeOf(req), queryOrKey: id });
      ctx.signal.throwIfAborted();
      // Written after untrusted content: the entry keeps where that came from, so whoever recalls it is tainted too.
      const untrusted = ctx.taint?.length ? flatLabel(ctx.taint) : undefined;
      const { entry } = await store.write(req, { id, at: now(), ...(untrusted ? { untrusted } : {}) });
      const output: MemoryWriteOutput = { id: entry.id, at: iso(entry.at) };
      // Tool success is not intent: confirm the sealed entry is really there.
      return { kind: 'completed', output, verified: (await store.has(entry.id)) ? 'Verified' : 'Unverified' };
    },
  });

  const recall = implementTool(memoryRecallTool, {
    async run(req, ctx) {
      // The query is memory content too: the audit gets a keyed tag of its terms, and the range.
      const queryOrKey = `query:${store.queryTag(req.query)} from:${iso(req.from)} to:${iso(req.to)}`;
      await ctx.recordMemoryAccess({ operation: 'Read', scope: memoryRecallTool.scopeOf(req), queryOrKey });
      ctx.signal.throwIfAborted();
      const found = await store.recall(req);
      const output: MemoryRecallOutput = { entries: found.entries.map((e) => ({ ...e, at: iso(e.at) })), more: found.more };
      // Every returned entry written after untrusted content adds its sources (flat: the sources themselves).
      const untrusted = flatLabel(found.entries.flatMap((e) => (e.untrusted ? [e.untrusted] : [])));
      return { kind: 'completed', output, verified: 'NotApplicable', ...(untrusted ? { untrusted } : {}) };
    },
  });

  const forget = implementTool(memoryForgetTool, {
    async run(req, ctx) {
      const queryOrKey = req.id ?? `filter from:${iso(req.from)} to:${iso(req.to)}`;
      await ctx.recordMemoryAccess({ operation: 'Forget', scope: memoryForgetTool.scopeOf(req), queryOrKey });
      ctx.signal.throwIfAborted();
      const output: MemoryForgetOutput = await store.forget(req);
      // Read back by id: a forgotten entry must be gone (a filter forget has no single thing to check).
      const verified =
        req.id === undefined || output.forgotten === 0 ? 'NotApplicable' : (await store.has(req.id)) ? 'Unverified' : 'Verified';
      return { kind: 'completed', output, verified };
    },
  });

  return [write, recall, forget];
}
