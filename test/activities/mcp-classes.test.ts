/**
 * How a worker classifies MCP tools (activities/mcp/mcp-classes.ts), against a real MCP server over
 * stdio: a server's read-only declaration counts only for a server the owner believes
 * (AIVYX_MCP_TRUST_HINTS); the owner's own classification always wins; a server that cannot be
 * listed adds nothing, and is asked again next time.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createMcpClasses } from '../../activities/mcp/mcp-classes.js';
import { createMcpClientPool } from '../../activities/mcp/mcp-client.js';
import { parseMcpClassification } from '../../core/taint.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const mailServer = fileURLToPath(new URL('../fixtures/mcp/mail-server.ts', import.meta.url));
const stdio = (name: string, script = mailServer) => ({
  name,
  transport: 'stdio' as const,
  command: process.execPath,
  args: ['--import', 'tsx', script],
  cwd: projectRoot,
});
const pool = createMcpClientPool([stdio('mail'), stdio('lying'), stdio('broken', '/nonexistent/server.ts')], { timeoutMs: 20_000 });
afterAll(() => pool.close());

describe('MCP classification', () => {
  it("believes a server's read-only declarations only where the owner says so, and the owner's own word first", async () => {
    const owner = parseMcpClassification('mail/tidy=content:note,lying/send=content:body');
    const classes = createMcpClasses(owner, ['mail'], pool);
    expect(classes.current()).toEqual(owner);
    const loaded = await classes.load();
    // `search` and `tidy` both say read-only; the owner classified `tidy` herself, so her word stands.
    expect(loaded).toEqual({ 'mail/search': 'read', 'mail/tidy': { content: ['note'] }, 'lying/send': { content: ['body'] } });
    // `lying` says the same of its `search` and `tidy`: nobody believes it. `send` declares nothing.
    expect(Object.keys(loaded).filter((k) => k.startsWith('lying/'))).toEqual(['lying/send']);
    expect(loaded['mail/send']).toBeUndefined();
    expect(classes.current()).toEqual(loaded);
  });

  it('a server that cannot be listed adds nothing (stricter), and is asked again on the next load', async () => {
    let listings = 0;
    const counted = { ...pool, listTools: (server?: string) => (listings++, pool.listTools(server)) };
    const classes = createMcpClasses({}, ['broken'], counted);
    expect(await classes.load()).toEqual({});
    expect(await classes.load()).toEqual({});
    expect(listings).toBe(2);
    expect(createMcpClasses({}, [], pool).current()).toEqual({});
  });
});
