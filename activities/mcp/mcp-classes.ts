/**
 * How this worker classifies MCP tools (core/taint.ts): the owner's `AIVYX_MCP_TOOLS`, and — only for
 * servers the owner says to take at their word (`AIVYX_MCP_TRUST_HINTS`) — the tools such a server
 * declares read-only (`annotations.readOnlyHint`). The owner's own classification always wins; a
 * server the owner did not name declares nothing. A failed listing classifies nothing extra (stricter)
 * and is tried again on the next turn.
 */
import type { McpClassification } from '../../core/taint.js';
import type { McpClientPool } from './mcp-client.js';

/** The classification a turn opens with (`load`), and the last one loaded (`current`, for the worker's own checks). */
export interface McpClasses {
  load(): Promise<McpClassification>;
  current(): McpClassification;
}

/** Classes over the owner's classification and the declarations of the servers in `trustHints`. */
export function createMcpClasses(owner: McpClassification, trustHints: readonly string[], pool?: McpClientPool): McpClasses {
  let current = owner;
  let loaded: Promise<McpClassification> | undefined;

  async function declaredReads(): Promise<McpClassification> {
    const reads: Record<string, 'read'> = {};
    for (const server of trustHints) {
      for (const tool of await pool!.listTools(server)) if (tool.readOnly === true) reads[`${server}/${tool.name}`] = 'read';
    }
    return Object.freeze({ ...reads, ...owner });
  }

  return {
    load() {
      if (trustHints.length === 0 || !pool) return Promise.resolve(owner);
      loaded ??= declaredReads().then(
        (classes) => (current = classes),
        () => {
          loaded = undefined;
          return owner;
        },
      );
      return loaded;
    },
    current: () => current,
  };
}
