/** Configuration from the environment: read only by composition roots (CLI entry points, worker). */
import { resolve } from 'node:path';
import { parseMcpServers, type McpServerConfig } from '../activities/mcp/mcp-client.js';
import { AivyxError } from '../core/errors.js';
import { parseAuditDigestTarget, type AuditDigestTarget } from './audit/digest.js';
import { parseMcpTierGrants, type McpTierGrants } from '../core/tools/mcp-tools.js';

/** Resolved runtime configuration. */
export interface AivyxConfig {
  /** Data directory: PGlite, the dev server's SQLite file, tokens, logs. */
  home: string;
  /** PostgreSQL URL; unset → PGlite under `home`. */
  databaseUrl: string | undefined;
  /** An existing Temporal frontend; unset → a dev server is started under `home`. */
  temporalAddress: string | undefined;
  namespace: string;
  taskQueue: string;
  /** `openai:<model>`, `anthropic:<model>`, `ollama:<model>` or `scripted:<file>`; unset → Ollama if it answers, else the demo. */
  llm: string | undefined;
  /** The offline demo script used when no model is configured. */
  demoScript: string;
  /** The model `aivyx up` uses when it finds Ollama on localhost and AIVYX_LLM is unset. */
  ollamaModel: string;
  temporalPort: number;
  uiPort: number;
  restPort: number;
  turnBudgetMs: number;
  /** The agent's own capability set, before tier ceilings. */
  capabilities: string[];
  confirmFirst: string[];
  /** MCP servers (AIVYX_MCP_SERVERS, JSON) and the tiers opted in to their tools (AIVYX_MCP_TIERS). */
  mcpServers: McpServerConfig[];
  mcpTiers: McpTierGrants;
  /** Audit checkpoints: at least every this many entries (AIVYX_AUDIT_CHECKPOINT_EVERY; 0 = only at turn/mission ends and on the timer). */
  auditCheckpointEvery: number;
  /** …and every this many seconds while the log grows (AIVYX_AUDIT_CHECKPOINT_SECONDS; 0 = no timer). */
  auditCheckpointSeconds: number;
  /** The owner's daily checkpoint digest (AIVYX_AUDIT_DIGEST=<channel>:<address>); unset → none. */
  auditDigest: AuditDigestTarget | undefined;
}

/** The agent's default capabilities: what a personal assistant on your own machine needs from day one. */
export const DEFAULT_AGENT_CAPABILITIES = ['fs.read', 'fs.write', 'fs.metadata', 'shell.exec', 'llm.call', 'memory.read', 'memory.write', 'memory.forget', 'audit.read', 'config.read'];

/**
 * Tools that are confirm-first while `AIVYX_CONFIRM_DESTRUCTIVE` is on (the default): effects that
 * cannot be taken back — deleting, committing, running commands, posting, messaging others.
 */
export const DEFAULT_CONFIRM_FIRST = ['fs.delete', 'git.commit', 'shell.exec', 'shell.spawn', 'net.post', 'channel.send'];

/** `AIVYX_CONFIRM_FIRST` when set (an explicit list, may be empty), else the destructive set unless `AIVYX_CONFIRM_DESTRUCTIVE=off`. */
function confirmFirstFrom(env: NodeJS.ProcessEnv): string[] {
  if (env.AIVYX_CONFIRM_FIRST !== undefined) return listFrom(env, 'AIVYX_CONFIRM_FIRST', []);
  const raw = (env.AIVYX_CONFIRM_DESTRUCTIVE ?? 'on').trim().toLowerCase();
  if (raw === 'on' || raw === 'true' || raw === '1' || raw === '') return [...DEFAULT_CONFIRM_FIRST];
  if (raw === 'off' || raw === 'false' || raw === '0') return [];
  throw new AivyxError('Config', `AIVYX_CONFIRM_DESTRUCTIVE must be on or off, not "${env.AIVYX_CONFIRM_DESTRUCTIVE}"`);
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new AivyxError('Config', `${name} must be a non-negative integer, got "${raw}"`);
  return n;
}

function listFrom(env: NodeJS.ProcessEnv, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined) return fallback;
  return raw.split(',').map((s) => s.trim()).filter(Boolean);
}

/** Reads the configuration; `projectRoot` locates the bundled demo script. */
export function loadConfig(env: NodeJS.ProcessEnv, projectRoot: string): AivyxConfig {
  return {
    home: resolve(env.AIVYX_HOME || '.aivyx'),
    databaseUrl: env.DATABASE_URL || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.AIVYX_TASK_QUEUE || 'aivyx',
    llm: env.AIVYX_LLM || undefined,
    demoScript: resolve(projectRoot, 'docs/examples/demo-script.json'),
    ollamaModel: env.AIVYX_OLLAMA_MODEL || 'llama3.2',
    temporalPort: intFrom(env, 'AIVYX_TEMPORAL_PORT', 7233),
    uiPort: intFrom(env, 'AIVYX_UI_PORT', 8233),
    restPort: intFrom(env, 'AIVYX_REST_PORT', 8787),
    turnBudgetMs: intFrom(env, 'AIVYX_TURN_BUDGET_MS', 5 * 60_000),
    capabilities: listFrom(env, 'AIVYX_CAPABILITIES', DEFAULT_AGENT_CAPABILITIES),
    confirmFirst: confirmFirstFrom(env),
    mcpServers: parseMcpServers(env.AIVYX_MCP_SERVERS),
    mcpTiers: parseMcpTierGrants(env.AIVYX_MCP_TIERS),
    auditCheckpointEvery: intFrom(env, 'AIVYX_AUDIT_CHECKPOINT_EVERY', 256),
    auditCheckpointSeconds: intFrom(env, 'AIVYX_AUDIT_CHECKPOINT_SECONDS', 60),
    auditDigest: parseAuditDigestTarget(env.AIVYX_AUDIT_DIGEST),
  };
}
