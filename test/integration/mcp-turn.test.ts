/**
 * MCP through a whole turn: a configured stdio server's tool runs as `mcp.call`, audited like any
 * tool — but only for a tier an operator opted in (mcp.call is granted to no tier by default).
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpClientPool, type McpClientPool } from '../../activities/mcp/mcp-client.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const serverScript = fileURLToPath(new URL('../fixtures/mcp/echo-server.ts', import.meta.url));
const script = {
  rules: [
    {
      steps: [
        { call: [{ tool: 'mcp.call', input: { server: 'echo', tool: 'echo', arguments: { text: 'ping over mcp' } } }] },
        { say: '{{result.0.status}}: {{result.0.output}}' },
      ],
    },
  ],
};

let h: Harness;
let pool: McpClientPool;
beforeAll(async () => {
  pool = createMcpClientPool(
    [{ name: 'echo', transport: 'stdio', command: process.execPath, args: ['--import', 'tsx', serverScript], cwd: projectRoot }],
    { timeoutMs: 20_000 },
  );
  h = await startHarness({
    script,
    agent: { capabilities: ['mcp.call:echo/*'] },
    mcp: { pool, tierGrants: { Trusted: ['mcp.call:echo/*'] } },
  });
}, 60_000);
afterAll(async () => {
  await h?.stop();
  await pool?.close();
});

describe('mcp.call in a turn', () => {
  it('runs the remote tool for an opted-in tier and audits it under mcp.call:<server>/<tool>', async () => {
    const { turnId, outcome } = await h.turn('echo via mcp');
    expect(outcome.status).toBe('Completed');
    expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(/^Completed: .*ping over mcp/);
    expect(await h.audit(turnId)).toContainEqual(
      expect.objectContaining({ type: 'ToolCall', toolId: 'mcp.call', scopeUsed: 'mcp.call:echo/echo' }),
    );
  }, 60_000);

  it('denies the same call from a tier that was not opted in', async () => {
    const { turnId, outcome } = await h.turn('echo via mcp', { tier: 'SemiTrusted' });
    expect(outcome.status === 'Completed' && outcome.finalMessage).toMatch(/^Denied/);
    expect(await h.audit(turnId)).toContainEqual(
      expect.objectContaining({ type: 'ScopeDenied', toolAttempted: 'mcp.call', scopeRequested: 'mcp.call' }),
    );
  }, 60_000);
});
