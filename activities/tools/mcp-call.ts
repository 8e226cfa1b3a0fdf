/**
 * `mcp.call`: calls one tool of a configured MCP server through the client pool. At most once
 * (the tool's effects are unknown): the intent is claimed before the call. Unverified. A tool
 * result with `isError` is a failure (AivyxError 'Tool' carrying the server's text).
 */
import { createHash } from 'node:crypto';
import { AivyxError } from '../../core/errors.js';
import { mcpCallTool } from '../../core/tools/mcp-tools.js';
import type { McpClientPool } from '../mcp/mcp-client.js';
import { recordIntentEnd, type IntentStore } from './intent-store.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Cap of the serialized output (64 KiB); longer text content is cut. */
export const MCP_OUTPUT_CAP_CHARS = 64 * 1024;

/** Ports and settings of `createMcpCallTool`. */
export interface McpCallDeps {
  pool: McpClientPool;
  intents: IntentStore;
  timeoutMs?: number;
}

function capContent(content: unknown[]): { content: unknown[]; truncated: boolean } {
  let room = MCP_OUTPUT_CAP_CHARS;
  let truncated = false;
  const out: unknown[] = [];
  for (const item of content) {
    const size = JSON.stringify(item).length;
    if (size <= room) {
      out.push(item);
      room -= size;
      continue;
    }
    truncated = true;
    const rec = item as { type?: unknown; text?: unknown };
    if (rec.type === 'text' && typeof rec.text === 'string' && room > 100) out.push({ type: 'text', text: rec.text.slice(0, room - 100) });
    break;
  }
  return { content: out, truncated };
}

/** Creates the `mcp.call` implementation. */
export function createMcpCallTool(deps: McpCallDeps): ToolImplementation {
  return implementTool(mcpCallTool, {
    // The scope names a configured server and a tool name: nothing to canonicalize beyond the input.
    async run(req, ctx) {
      if (!deps.pool.servers().includes(req.server)) {
        throw new AivyxError('NotFound', `mcp.call: no MCP server named "${req.server}"`, {
          detail: { tool: 'mcp.call', server: req.server },
          hint: `configured: ${deps.pool.servers().join(', ') || 'none'}`,
        });
      }
      ctx.signal.throwIfAborted();
      const hash = createHash('sha256')
        .update(JSON.stringify([req.server, req.tool, req.arguments]))
        .digest('hex');
      const claim = await deps.intents.begin(ctx.idemKey, { tool: 'mcp.call', inputHash: hash });
      if (claim === 'already-started') {
        throw new AivyxError('Tool', 'mcp.call was interrupted and is not re-run (at-most-once); check whether it took effect', {
          detail: { tool: 'mcp.call', idemKey: ctx.idemKey, atMostOnce: true },
          hint: `the call was ${req.server}/${req.tool}`,
        });
      }
      let summary = 'failed before it ended';
      try {
        const beat = setInterval(() => ctx.heartbeat({ tool: 'mcp.call', server: req.server }), 1_000);
        const r = await deps.pool
          .callTool(req.server, req.tool, req.arguments, {
            signal: ctx.signal,
            ...(deps.timeoutMs === undefined ? {} : { timeoutMs: deps.timeoutMs }),
          })
          .finally(() => clearInterval(beat));
        const { content, truncated } = capContent(r.content);
        if (r.isError) {
          const text = content
            .map((c) => (c as { text?: unknown }).text)
            .filter((t): t is string => typeof t === 'string')
            .join('\n')
            .slice(0, 2000);
          summary = 'tool reported an error';
          throw new AivyxError('Tool', `mcp.call ${req.server}/${req.tool} reported an error: ${text || '(no text)'}`, {
            detail: { tool: 'mcp.call', server: req.server, mcpTool: req.tool },
          });
        }
        summary = 'completed';
        const output: Record<string, unknown> = { server: req.server, tool: req.tool, content, truncated };
        if (r.structuredContent !== undefined && JSON.stringify(r.structuredContent).length <= MCP_OUTPUT_CAP_CHARS)
          output.structuredContent = r.structuredContent;
        return { kind: 'completed', output, verified: 'Unverified' };
      } catch (e) {
        if (summary === 'failed before it ended') summary = e instanceof AivyxError ? e.message.slice(0, 200) : 'failed';
        throw e;
      } finally {
        await recordIntentEnd(deps.intents, ctx.idemKey, summary);
      }
    },
  });
}
