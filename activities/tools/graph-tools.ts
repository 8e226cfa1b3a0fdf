/**
 * `graph.write` and `graph.query` over a GraphStore. A relation written after untrusted content
 * keeps that content's sources; a query result carries the union of the labels of the relations it
 * followed, so the turn that reads it is tainted exactly as a recalled memory would taint it.
 */
import { flatLabel } from '../../core/taint.js';
import { graphQueryTool } from '../../core/tools/graph-query.js';
import { graphWriteTool } from '../../core/tools/graph-write.js';
import type { GraphAnswer, GraphStore } from './graph-port.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Ports of the graph tools. */
export interface GraphToolDeps {
  store: GraphStore;
  /** Clock for new relations (tests pin it); default Date.now. */
  now?: () => number;
}

/** Output of `graph.write`. */
export interface GraphWriteOutput {
  stored: number;
}

/** Output of `graph.query`. */
export interface GraphQueryOutput {
  answers: GraphAnswer[];
  more: boolean;
}

/** The two graph tools, in catalog order. */
export function createGraphTools(deps: GraphToolDeps): ToolImplementation[] {
  const { store } = deps;
  const now = deps.now ?? Date.now;

  const write = implementTool(graphWriteTool, {
    async run(req, ctx) {
      ctx.signal.throwIfAborted();
      // Learned after untrusted content: each relation keeps where that came from.
      const untrusted = ctx.taint?.length ? flatLabel(ctx.taint) : undefined;
      const output: GraphWriteOutput = await store.write(req.relations, { at: now(), ...(untrusted ? { untrusted } : {}) });
      return { kind: 'completed', output, verified: 'NotApplicable' };
    },
  });

  const query = implementTool(graphQueryTool, {
    async run(req, ctx) {
      ctx.signal.throwIfAborted();
      const found = await store.query(req);
      const output: GraphQueryOutput = { answers: found.answers, more: found.more };
      const untrusted = flatLabel(found.labels) || undefined;
      return { kind: 'completed', output, verified: 'NotApplicable', ...(untrusted ? { untrusted } : {}) };
    },
  });

  return [write, query];
}
