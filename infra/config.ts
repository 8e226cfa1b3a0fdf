/**
 * Configuration from the environment: read only by composition roots (CLI entry points, worker).
 * Every variable is parsed through one table (`infra/config/env-table.ts`) before anything starts,
 * so a bad value is refused by name before the database opens or a server starts.
 */
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { AivyxError } from '../core/errors.js';
import type { TrustedPlaces } from '../activities/taint-labels.js';
import type { McpClassification, TaintPolicy } from '../core/taint.js';
import type { McpServerConfig } from '../activities/mcp/mcp-servers.js';
import type { McpTierGrants } from '../core/tools/mcp-tools.js';
import type { PriceTable, SpendBudget } from '../core/spend.js';
import type { SpendBudgets } from '../activities/ports.js';
import { DEFAULT_CONFIRM_FIRST, type EnvValues } from './config/env-table.js';
import { parseEnv } from './config/parse-env.js';

export { DEFAULT_AGENT_CAPABILITIES, DEFAULT_CONFIRM_FIRST, ENV_TABLE, type EnvName, type EnvValues } from './config/env-table.js';
export { describeEnv, envMarkdownTable, envValue, parseEnv, type EnvRow, type EnvSource } from './config/parse-env.js';
import { defaultSpecialists, type Specialist } from '../core/specialists.js';
import type { TierPolicy } from '../core/capability/tier-policy.js';
import { tierPolicyFromEnv } from './tier-policy.js';
import type { AuditDigestTarget } from './audit/digest.js';

/** Resolved runtime configuration. */
export interface AivyxConfig {
  /** Data directory: PGlite, the dev server's SQLite file, tokens, logs. */
  home: string;
  /** PostgreSQL URL; unset → PGlite under `home`. */
  databaseUrl: string | undefined;
  /** An existing Temporal frontend; unset → a dev server is started under `home`. */
  temporalAddress: string | undefined;
  namespace: string;
  /** AIVYX_TASK_QUEUE; unset → `aivyx-<id>` from the install's identity, known once the keyring is unlocked (app/stack.ts). */
  taskQueue: string | undefined;
  /** The host-bound tools' task queue (AIVYX_HOST_QUEUE); unset → the shared queue runs them. */
  hostQueue: string | undefined;
  /** Workflows a worker keeps cached (AIVYX_WORKFLOW_CACHE); the rest replay on demand. */
  workflowCache: number;
  /** `openai:<model>`, `anthropic:<model>`, `ollama:<model>` or `scripted:<file>`; unset → Ollama if it answers, else the demo. */
  llm: string | undefined;
  /** The offline demo script used when no model is configured. */
  demoScript: string;
  /** The model `aivyx up` uses when it finds Ollama on localhost and AIVYX_LLM is unset. */
  ollamaModel: string;
  temporalPort: number;
  uiPort: number;
  restPort: number;
  /** The owner's app (channels/app); 0: any free port. */
  appPort: number;
  /** The codec server the Temporal UI decodes payloads through (a stable port: its sign-in page is bookmarkable). */
  codecPort: number;
  turnBudgetMs: number;
  /** Model prices (AIVYX_PRICES) and the spend budgets (AIVYX_*_TOKEN_BUDGET, AIVYX_*_COST_BUDGET; docs/BUDGETS.md). */
  prices: PriceTable;
  spendBudgets: SpendBudgets;
  /** A session closes after this long without a message. */
  sessionIdleMs: number;
  /** Tokens the history and the new message may take in one prompt (AIVYX_HISTORY_TOKENS). */
  historyTokens: number;
  /** The agent's own capability set, before tier ceilings. */
  capabilities: string[];
  confirmFirst: string[];
  /** After untrusted content: each effect or egress tool's action (AIVYX_TAINT_POLICY; docs/SECURITY.md). */
  taintPolicy: TaintPolicy;
  /** Tools whose untrusted results the model is shown (AIVYX_SHOW_UNTRUSTED); the rest are held as values. */
  showUntrusted: string[];
  /** MCP tools the owner classified (AIVYX_MCP_TOOLS). */
  mcpTools: McpClassification;
  /** The owner's own files (AIVYX_TRUSTED_ROOTS, canonical paths) and vouched-for MCP servers (AIVYX_MCP_TRUSTED). */
  trustedPlaces: TrustedPlaces;
  /** MCP servers (AIVYX_MCP_SERVERS, JSON) and the tiers opted in to their tools (AIVYX_MCP_TIERS). */
  mcpServers: McpServerConfig[];
  /** Servers whose read-only declarations the owner believes (AIVYX_MCP_TRUST_HINTS). */
  mcpTrustHints: string[];
  mcpTiers: McpTierGrants;
  /** The specialists a turn may delegate to (AIVYX_SPECIALISTS, or the shipped researcher and writer). */
  specialists: Specialist[];
  /** What satisfies the SemiTrusted ▲ ceiling entries (AIVYX_SEMITRUSTED_*; infra/tier-policy.ts). */
  tierPolicy: TierPolicy;
  /** Every variable of the table, parsed (channels read their own settings from here). */
  env: EnvValues;
  /** Audit checkpoints: at least every this many entries (AIVYX_AUDIT_CHECKPOINT_EVERY; 0 = only at turn/mission ends and on the timer). */
  auditCheckpointEvery: number;
  /** …and every this many seconds while the log grows (AIVYX_AUDIT_CHECKPOINT_SECONDS; 0 = no timer). */
  auditCheckpointSeconds: number;
  /** The owner's daily checkpoint digest (AIVYX_AUDIT_DIGEST=<channel>:<address>); unset → none. */
  auditDigest: AuditDigestTarget | undefined;
}

/** A trusted root as the file tools see paths: `~` expanded, absolute, symlinks resolved when it exists. */
function canonicalRoot(raw: string, homeDir: string): string {
  const expanded = raw === '~' ? homeDir : raw.startsWith('~/') ? join(homeDir, raw.slice(2)) : raw;
  const abs = resolve(expanded);
  return existsSync(abs) ? realpathSync(abs) : abs;
}

/** `AIVYX_CONFIRM_FIRST` when set (an explicit list, may be empty), else the destructive set unless `AIVYX_CONFIRM_DESTRUCTIVE=off`. */
function confirmFirstOf(v: EnvValues): string[] {
  if (v.AIVYX_CONFIRM_FIRST !== undefined) return v.AIVYX_CONFIRM_FIRST;
  return v.AIVYX_CONFIRM_DESTRUCTIVE ? [...DEFAULT_CONFIRM_FIRST] : [];
}

/** A budget from its two variables; undefined when neither is set. */
function budget(tokens: number | undefined, costUsd: number | undefined): SpendBudget | undefined {
  if (tokens === undefined && costUsd === undefined) return undefined;
  return { ...(tokens !== undefined ? { tokens } : {}), ...(costUsd !== undefined ? { costUsd } : {}) };
}

/** The spend budgets the variables set (an unset one is no limit). */
function spendBudgetsOf(v: EnvValues): SpendBudgets {
  const turn = budget(v.AIVYX_TURN_TOKEN_BUDGET, v.AIVYX_TURN_COST_BUDGET);
  const sessionDay = budget(v.AIVYX_SESSION_DAY_TOKEN_BUDGET, v.AIVYX_SESSION_DAY_COST_BUDGET);
  const mission = budget(v.AIVYX_MISSION_TOKEN_BUDGET, v.AIVYX_MISSION_COST_BUDGET);
  return { ...(turn ? { turn } : {}), ...(sessionDay ? { sessionDay } : {}), ...(mission ? { mission } : {}) };
}

/** `AIVYX_MCP_TRUST_HINTS`, each a configured server: a misspelt name must not quietly believe nothing (or another server). */
function trustHintsOf(v: EnvValues): string[] {
  const configured = v.AIVYX_MCP_SERVERS.map((s) => s.name);
  const unknown = v.AIVYX_MCP_TRUST_HINTS.filter((name) => !configured.includes(name));
  if (unknown.length > 0)
    throw new AivyxError('Config', `AIVYX_MCP_TRUST_HINTS: no MCP server named ${unknown.map((n) => `"${n}"`).join(', ')}`, {
      hint: `configured servers: ${configured.join(', ') || 'none (AIVYX_MCP_SERVERS)'}`,
    });
  return v.AIVYX_MCP_TRUST_HINTS;
}

/** Reads and validates the configuration (throws `Config` naming every bad variable); `projectRoot` locates the bundled demo script. */
export function loadConfig(env: Record<string, string | undefined>, projectRoot: string): AivyxConfig {
  const { values: v } = parseEnv(env);
  return {
    home: resolve(v.AIVYX_HOME),
    databaseUrl: v.DATABASE_URL,
    temporalAddress: v.TEMPORAL_ADDRESS,
    namespace: v.TEMPORAL_NAMESPACE,
    taskQueue: v.AIVYX_TASK_QUEUE,
    hostQueue: v.AIVYX_HOST_QUEUE,
    workflowCache: v.AIVYX_WORKFLOW_CACHE,
    llm: v.AIVYX_LLM,
    demoScript: resolve(projectRoot, 'docs/examples/demo-script.json'),
    ollamaModel: v.AIVYX_OLLAMA_MODEL,
    temporalPort: v.AIVYX_TEMPORAL_PORT,
    uiPort: v.AIVYX_UI_PORT,
    restPort: v.AIVYX_REST_PORT,
    appPort: v.AIVYX_APP_PORT,
    codecPort: v.AIVYX_CODEC_PORT,
    turnBudgetMs: v.AIVYX_TURN_BUDGET_MS,
    prices: v.AIVYX_PRICES,
    spendBudgets: spendBudgetsOf(v),
    sessionIdleMs: v.AIVYX_SESSION_IDLE_MS,
    historyTokens: v.AIVYX_HISTORY_TOKENS,
    capabilities: v.AIVYX_CAPABILITIES,
    confirmFirst: confirmFirstOf(v),
    taintPolicy: v.AIVYX_TAINT_POLICY,
    showUntrusted: v.AIVYX_SHOW_UNTRUSTED,
    mcpTools: v.AIVYX_MCP_TOOLS,
    trustedPlaces: {
      roots: v.AIVYX_TRUSTED_ROOTS.map((r) => canonicalRoot(r, env.HOME || homedir())),
      mcpServers: v.AIVYX_MCP_TRUSTED,
      owners: v.AIVYX_OWNER_IDS,
    },
    mcpServers: v.AIVYX_MCP_SERVERS,
    mcpTiers: v.AIVYX_MCP_TIERS,
    mcpTrustHints: trustHintsOf(v),
    specialists: v.AIVYX_SPECIALISTS ?? defaultSpecialists(join(resolve(v.AIVYX_HOME), 'workspace', 'notes')),
    env: v,
    // Validated here too (a bad glob names its variable before anything starts).
    tierPolicy: tierPolicyFromEnv(env, resolve(v.AIVYX_HOME)),
    auditCheckpointEvery: v.AIVYX_AUDIT_CHECKPOINT_EVERY,
    auditCheckpointSeconds: v.AIVYX_AUDIT_CHECKPOINT_SECONDS,
    auditDigest: v.AIVYX_AUDIT_DIGEST,
  };
}
