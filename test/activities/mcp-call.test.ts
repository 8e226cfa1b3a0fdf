/** mcp.call against a real MCP server the test starts: over stdio (a child process) and over streamable HTTP on 127.0.0.1. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpClientPool, parseMcpServers, type McpClientPool } from '../../activities/mcp/mcp-client.js';
import { createMemoryIntentStore } from '../../activities/tools/intent-store.js';
import { createMcpCallTool } from '../../activities/tools/mcp-call.js';
import { AivyxError } from '../../core/errors.js';
import { mcpToolSpec } from '../../core/tools/mcp-tools.js';
import { createEchoServer } from '../fixtures/mcp/echo-server.js';
import { toolContext } from '../support/tool-context.js';
import { aivyxFailure } from '../support/aivyx-failure.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const serverScript = fileURLToPath(new URL('../fixtures/mcp/echo-server.ts', import.meta.url));

let http: Server;
let url: string;
let pool: McpClientPool;

beforeAll(async () => {
  // Stateless streamable HTTP: a fresh server and transport per request.
  http = createServer((req, res) => {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = createEchoServer();
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  pool = createMcpClientPool(
    parseMcpServers(
      JSON.stringify([
        { name: 'echo', transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', serverScript], cwd: projectRoot },
        { name: 'web', transport: 'http', url },
      ]),
    ),
    { timeoutMs: 20_000 },
  );
});

afterAll(async () => {
  await pool?.close();
  await new Promise((r) => http?.close(r));
});

describe('mcp client pool', () => {
  it('lists the tools of both servers (lazy connect) and builds the model-facing spec', async () => {
    const tools = await pool.listTools();
    expect(
      tools
        .filter((t) => t.server === 'echo')
        .map((t) => t.name)
        .sort(),
    ).toEqual(['echo', 'fail', 'reverse', 'slow']);
    expect(
      tools
        .filter((t) => t.server === 'web')
        .map((t) => t.name)
        .sort(),
    ).toEqual(['echo', 'fail', 'reverse', 'slow']);
    const spec = mcpToolSpec(tools);
    expect(spec.id).toBe('mcp.call');
    expect(spec.description).toContain('server "echo", tool "echo"');
    expect(spec.description).toContain('server "web", tool "slow"');
  }, 30_000);

  it('refuses bad configuration', () => {
    expect(() => parseMcpServers('[{"name":"a/b","transport":"stdio","command":"x"}]')).toThrow(AivyxError);
    expect(() => parseMcpServers('[{"name":"a","transport":"ftp"}]')).toThrow(AivyxError);
    expect(() => parseMcpServers('{}')).toThrow(AivyxError);
    expect(parseMcpServers(undefined)).toEqual([]);
  });
});

describe('mcp.call', () => {
  it('calls echo over stdio and over streamable HTTP (Unverified), at most once', async () => {
    const intents = createMemoryIntentStore();
    const tool = createMcpCallTool({ pool, intents });
    expect(await tool.resolveScope({ server: 'echo', tool: 'echo', arguments: { text: 'hi' } })).toBe('mcp.call:echo/echo');
    const c = toolContext();
    const r = await tool.run({ server: 'echo', tool: 'echo', arguments: { text: 'héllo' } }, c);
    expect(r).toEqual({
      kind: 'completed',
      verified: 'Unverified',
      output: {
        server: 'echo',
        tool: 'echo',
        content: [{ type: 'text', text: 'héllo' }],
        structuredContent: { echoed: 'héllo' },
        truncated: false,
      },
    });
    expect(intents.get(c.idemKey)).toMatchObject({ tool: 'mcp.call', state: 'finished', outcome: 'completed' });
    const again = await aivyxFailure(tool.run({ server: 'echo', tool: 'echo', arguments: { text: 'héllo' } }, c));
    expect(again.detail).toMatchObject({ atMostOnce: true });

    const w = await tool.run({ server: 'web', tool: 'echo', arguments: { text: 'over http' } }, toolContext());
    expect(w.kind === 'completed' && w.output).toMatchObject({ content: [{ type: 'text', text: 'over http' }] });
  }, 30_000);

  it('fails cleanly: tool errors, unknown servers/tools, bad arguments, timeouts', async () => {
    const tool = createMcpCallTool({ pool, intents: createMemoryIntentStore(), timeoutMs: 500 });
    const err = await aivyxFailure(tool.run({ server: 'echo', tool: 'fail' }, toolContext()));
    expect(err.kind).toBe('Tool');
    expect(err.message).toContain('it broke');
    expect((await aivyxFailure(tool.run({ server: 'nope', tool: 'echo' }, toolContext()))).kind).toBe('NotFound');
    const unknown = await aivyxFailure(tool.run({ server: 'echo', tool: 'missing' }, toolContext()));
    expect(unknown.kind).toBe('Tool');
    expect((await aivyxFailure(tool.run({ server: 'echo', tool: 'echo', arguments: { text: 5 } }, toolContext()))).kind).toBe('Tool');
    expect((await aivyxFailure(tool.run({ server: 'echo', tool: 'slow', arguments: { ms: 5_000 } }, toolContext()))).kind).toBe('Timeout');
    // The connection survives a timed-out request.
    expect((await tool.run({ server: 'echo', tool: 'echo', arguments: { text: 'still here' } }, toolContext())).kind).toBe('completed');
  }, 30_000);
});
