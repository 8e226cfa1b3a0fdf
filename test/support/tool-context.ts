/** A `ToolRunContext` for calling tool implementations directly in tests (no activity around them). */
import type { ToolRunContext } from '../../activities/tools/tool-implementation.js';

let calls = 0;

/** A fresh context: a new idempotency key per call (as a new activity would have), nothing held. */
export function toolContext(overrides: Partial<ToolRunContext> = {}): ToolRunContext {
  return {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    idemKey: `wf/run/act-${++calls}`,
    turnId: 'turn-test',
    held: [],
    recordMemoryAccess: async () => undefined,
    ...overrides,
  };
}
