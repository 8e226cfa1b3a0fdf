/**
 * The configured MCP servers (AIVYX_MCP_SERVERS) and their parser: plain data, apart from the
 * client pool, so reading the configuration loads no MCP SDK.
 */
import { AivyxError } from '../../core/errors.js';
import { MCP_SERVER_NAME } from '../../core/tools/mcp-tools.js';

/** One configured MCP server. */
export type McpServerConfig =
  | { name: string; transport: 'stdio'; command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { name: string; transport: 'http'; url: string; headers?: Record<string, string> };

/**
 * Reads AIVYX_MCP_SERVERS: a JSON array of {@link McpServerConfig}. Throws AivyxError('Config').
 * Example: `[{"name":"echo","transport":"stdio","command":"node","args":["server.js"]}]`.
 */
export function parseMcpServers(raw: string | undefined): McpServerConfig[] {
  if (raw === undefined || raw.trim() === '') return [];
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (cause) {
    throw new AivyxError('Config', 'AIVYX_MCP_SERVERS must be a JSON array', { cause });
  }
  if (!Array.isArray(value)) throw new AivyxError('Config', 'AIVYX_MCP_SERVERS must be a JSON array');
  const seen = new Set<string>();
  return value.map((v, i) => {
    const c = v as Record<string, unknown>;
    const where = `AIVYX_MCP_SERVERS[${i}]`;
    if (typeof c !== 'object' || c === null || typeof c.name !== 'string' || !MCP_SERVER_NAME.test(c.name))
      throw new AivyxError('Config', `${where}: "name" must be letters, digits, "_" or "-"`);
    if (seen.has(c.name)) throw new AivyxError('Config', `${where}: duplicate server name "${c.name}"`);
    seen.add(c.name);
    if (c.transport === 'stdio') {
      if (typeof c.command !== 'string' || c.command === '') throw new AivyxError('Config', `${where}: stdio needs "command"`);
      if (c.args !== undefined && (!Array.isArray(c.args) || c.args.some((a) => typeof a !== 'string')))
        throw new AivyxError('Config', `${where}: "args" must be strings`);
      return c as McpServerConfig;
    }
    if (c.transport === 'http') {
      if (typeof c.url !== 'string' || !/^https?:\/\//.test(c.url)) throw new AivyxError('Config', `${where}: http needs an http(s) "url"`);
      return c as McpServerConfig;
    }
    throw new AivyxError('Config', `${where}: "transport" must be "stdio" or "http"`);
  });
}
