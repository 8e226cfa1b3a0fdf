/**
 * MCP client pool over @modelcontextprotocol/sdk: one lazily connected Client per configured
 * server (stdio or streamable HTTP). Lists tools and calls one with a timeout. A failed connect is
 * forgotten so the next call tries again; a closed transport is reconnected on next use.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AivyxError } from '../../core/errors.js';
import type { DiscoveredMcpTool } from '../../core/tools/mcp-tools.js';
import type { McpServerConfig } from './mcp-servers.js';

export { parseMcpServers, type McpServerConfig } from './mcp-servers.js';

/** What one call returned (the SDK's CallToolResult, trimmed to what a tool outcome carries). */
export interface McpCallResult {
  content: unknown[];
  structuredContent?: unknown;
  isError: boolean;
}

/** The pool the mcp.call activity uses. */
export interface McpClientPool {
  /** Configured server names. */
  servers(): string[];
  /** Every tool of `server` (or of every server), connecting lazily. */
  listTools(server?: string): Promise<DiscoveredMcpTool[]>;
  /** Calls `tool` on `server`; rejects with AivyxError('Timeout') after `timeoutMs`. */
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    opts?: { timeoutMs?: number; signal?: AbortSignal },
  ): Promise<McpCallResult>;
  /** Closes every open connection (stdio servers are terminated). */
  close(): Promise<void>;
}

/** Default timeout of one MCP request: 30 s. */
export const MCP_DEFAULT_TIMEOUT_MS = 30_000;

/** Creates a pool over `configs`; nothing connects until first use. */
export function createMcpClientPool(configs: readonly McpServerConfig[], opts: { timeoutMs?: number } = {}): McpClientPool {
  const byName = new Map(configs.map((c) => [c.name, c]));
  const clients = new Map<string, Promise<Client>>();
  const defaultTimeout = opts.timeoutMs ?? MCP_DEFAULT_TIMEOUT_MS;

  function config(server: string): McpServerConfig {
    const c = byName.get(server);
    if (!c)
      throw new AivyxError('NotFound', `no MCP server named "${server}"`, {
        detail: { kind: 'mcp-server', id: server },
        hint: `configured servers: ${[...byName.keys()].join(', ') || 'none'}`,
      });
    return c;
  }

  function connect(server: string): Promise<Client> {
    const existing = clients.get(server);
    if (existing) return existing;
    const c = config(server);
    const promise = (async () => {
      const client = new Client({ name: 'aivyx', version: '1.0.0' });
      const transport =
        c.transport === 'stdio'
          ? new StdioClientTransport({
              command: c.command,
              ...(c.args ? { args: c.args } : {}),
              ...(c.env ? { env: c.env } : {}),
              ...(c.cwd ? { cwd: c.cwd } : {}),
              stderr: 'ignore',
            })
          : new StreamableHTTPClientTransport(new URL(c.url), c.headers ? { requestInit: { headers: c.headers } } : undefined);
      client.onclose = () => {
        if (clients.get(server) === promise) clients.delete(server);
      };
      try {
        await client.connect(transport, { timeout: defaultTimeout });
      } catch (cause) {
        await client.close().catch(() => undefined);
        throw new AivyxError(
          'Tool',
          `could not connect to MCP server "${server}": ${cause instanceof Error ? cause.message : String(cause)}`,
          { cause, detail: { server } },
        );
      }
      return client;
    })();
    clients.set(server, promise);
    promise.catch(() => {
      if (clients.get(server) === promise) clients.delete(server);
    });
    return promise;
  }

  return {
    servers: () => [...byName.keys()],
    async listTools(server) {
      const names = server === undefined ? [...byName.keys()] : [config(server).name];
      const out: DiscoveredMcpTool[] = [];
      for (const name of names) {
        const client = await connect(name);
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: defaultTimeout });
          for (const t of page.tools)
            out.push({
              server: name,
              name: t.name,
              ...(t.description ? { description: t.description } : {}),
              inputSchema: t.inputSchema as Record<string, unknown>,
              ...(t.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
            });
          cursor = page.nextCursor;
        } while (cursor);
      }
      return out;
    },
    async callTool(server, tool, args, callOpts = {}) {
      const client = await connect(server);
      const timeout = callOpts.timeoutMs ?? defaultTimeout;
      try {
        const r = await client.callTool({ name: tool, arguments: args }, undefined, {
          timeout,
          ...(callOpts.signal ? { signal: callOpts.signal } : {}),
        });
        return {
          content: Array.isArray(r.content) ? r.content : [],
          ...(r.structuredContent === undefined ? {} : { structuredContent: r.structuredContent }),
          isError: r.isError === true,
        };
      } catch (cause) {
        if (callOpts.signal?.aborted) throw new AivyxError('Cancelled', `mcp.call ${server}/${tool} was cancelled`, { cause });
        const msg = cause instanceof Error ? cause.message : String(cause);
        if (/timed out|timeout/i.test(msg))
          throw new AivyxError('Timeout', `mcp.call ${server}/${tool} timed out after ${timeout} ms`, { cause, detail: { server, tool } });
        throw new AivyxError('Tool', `mcp.call ${server}/${tool} failed: ${msg.slice(0, 500)}`, { cause, detail: { server, tool } });
      }
    },
    async close() {
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => undefined)));
    },
  };
}
