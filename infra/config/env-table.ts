/**
 * Every environment variable aivyx reads, in one table: its shape (a zod schema), its default and
 * one line of meaning. `loadConfig` parses through it before anything starts; `aivyx config`
 * prints it; docs/CONFIG.md's configuration table is generated from it (`aivyx config --markdown`,
 * checked by test/infra/config-doc.test.ts). A new variable is one entry here.
 */
import { readFileSync } from 'node:fs';
import { parseSpecialists, type Specialist } from '../../core/specialists.js';
import { parseMcpServers } from '../../activities/mcp/mcp-servers.js';
import { DEFAULT_CONFIRM_FIRST, TOOL_CATALOG } from '../../core/tool-catalog.js';
import { parseMcpClassification, parseTaintPolicy } from '../../core/taint.js';
import { priceTableSchema, type PriceTable } from '../../core/spend.js';
import { Scope } from '../../core/capability/scope.js';
import { TRUST_TIERS } from '../../core/capability/trust-tier.js';
import { AivyxError } from '../../core/errors.js';
import { checkTimeZone } from '../../core/local-time.js';
import { durationMs } from '../../core/duration.js';
import { findTool } from '../../core/tool-catalog.js';
import { parseMcpTierGrants } from '../../core/tools/mcp-tools.js';
import { parseAuditDigestTarget, type AuditDigestTarget } from '../audit/digest.js';
import { LOG_FORMATS } from '../telemetry/logs.js';
import { DEFAULT_ATTACHMENT_TTL_MS } from '../attachments.js';
import { envVar, httpUrl, integer, list, onOff, oneOf, parsedBy, port, text } from './env-var.js';

/** The agent's default capabilities: what a personal assistant on your own machine needs from day one. */
export const DEFAULT_AGENT_CAPABILITIES = [
  'fs.read',
  'fs.write',
  'fs.metadata',
  'shell.exec',
  'llm.call',
  'memory.read',
  'memory.write',
  'memory.forget',
  'audit.read',
  'config.read',
  // Confirm-first, and Trusted only unless AIVYX_SEMITRUSTED_MISSION_CREATE says otherwise: "remind me…" works out of the box.
  'mission.create',
  // The owner's own missions: Trusted only unless AIVYX_SEMITRUSTED_MISSION_LIST/_CANCEL say `own`; cancel is confirm-first.
  'mission.list',
  'mission.cancel',
  // Issue 35: learned skills (a proposal is stored only once a person approves its exact text) and the knowledge graph; Trusted only.
  'skills.propose',
  'skills.list',
  'skills.invoke',
  'graph.read',
  'graph.write',
  // Issue 33: a turn may ask the configured specialists (each gets at most its own set ∩ the turn's).
  'agent.delegate',
  // The owner may stop a running specialist (`aivyx specialists stop`); no tool of the assistant's uses it.
  'agent.terminate',
];

/** AIVYX_SPECIALISTS' text: inline JSON (starts with `[`), or the file it names. */
/** An attachment expiry: a positive duration (`30d`, `12h`). */
function attachmentTtl(raw: string): number {
  const ms = durationMs(raw);
  if (!(ms > 0)) throw new Error('must be a positive duration such as 30d or 12h');
  return ms;
}

function specialistsText(raw: string): string {
  const s = raw.trim();
  return s.startsWith('[') ? s : readFileSync(s, 'utf8');
}

/**
 * Tools that are confirm-first while `AIVYX_CONFIRM_DESTRUCTIVE` is on (the default): effects that
 * cannot be taken back — deleting, committing, running commands, posting, messaging others. Each
 * tool's definition says whether it is one (`confirmFirst`); the list derives from the catalog.
 */
export { DEFAULT_CONFIRM_FIRST };

const LLM_FORMS = ['scripted:', 'openai:', 'anthropic:', 'ollama:'];

function llmSpec(raw: string): string {
  const s = raw.trim();
  const prefix = LLM_FORMS.find((p) => s.startsWith(p));
  if (!prefix || s.length === prefix.length)
    throw new Error(`must be ${LLM_FORMS.map((p) => `${p}<${p === 'scripted:' ? 'file' : 'model'}>`).join(', ')}`);
  return s;
}

/** `AIVYX_PRICES`: a JSON price table (core/spend.ts). */
function parsePrices(raw: string): PriceTable {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error('must be JSON: {"<provider>:<model>": {"inputPerMTok": <dollars>, "outputPerMTok": <dollars>}}');
  }
  const parsed = priceTableSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(`is not a price table: ${parsed.error.issues.map((i) => `${i.path.join('.') || '$'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** A positive amount of US dollars, e.g. `0.50`. */
function dollars(raw: string): number {
  const n = Number(raw.trim());
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !(n > 0)) throw new Error('must be a positive amount of US dollars, e.g. 0.50');
  return n;
}

function scope(s: string): string {
  Scope.parse(s);
  return s;
}

function toolId(s: string): string {
  if (!findTool(s)) throw new AivyxError('Config', `"${s}" is not a tool id (e.g. shell.exec, fs.delete; docs/TOOLS.md)`);
  return s;
}

/**
 * What the model is shown by default: the output of the owner's own programs and logs on their own
 * machine (a command's output is what they asked to see; it still taints the conversation). Pages,
 * files outside the trusted roots, MCP servers' output and memories written from them are held.
 */
export const DEFAULT_SHOWN_UNTRUSTED: readonly string[] = ['shell.exec', 'shell.spawn', 'git.status', 'git.diff', 'audit.read'];

/** An `AIVYX_SHOW_UNTRUSTED` entry: a catalog tool, or `mcp.call:<server>`. */
function shownSource(s: string): string {
  if (/^mcp\.call:[A-Za-z0-9_-]+$/.test(s)) return s;
  return toolId(s);
}

function telegramId(s: string): number {
  if (!/^-?\d+$/.test(s)) throw new Error(`"${s}" is not a numeric Telegram id`);
  return Number(s);
}

function chatTier(pair: string): [string, string] {
  const [chat, tier, extra] = pair.split(':');
  if (chat === undefined || tier === undefined || extra !== undefined) throw new Error(`"${pair}" is not <chat id>:<tier>`);
  telegramId(chat);
  if (!(TRUST_TIERS as readonly string[]).includes(tier)) throw new Error(`"${tier}" is not a trust tier (SemiTrusted or Untrusted)`);
  return [chat, tier];
}

/** A Matrix user id, `@local:server` (identity is this id, never a display name). */
function matrixId(s: string): string {
  if (!/^@[a-z0-9._=\-/+]+:[A-Za-z0-9.-]+(:\d+)?$/.test(s)) throw new Error(`"${s}" is not a Matrix user id (@name:server)`);
  return s;
}

/** `<room id>:<tier>`, split at the last colon (room ids hold colons). */
function roomTier(pair: string): [string, string] {
  const cut = pair.lastIndexOf(':');
  const [room, tier] = [pair.slice(0, cut), pair.slice(cut + 1)];
  if (cut < 0 || !/^!.+:.+$/.test(room)) throw new Error(`"${pair}" is not <room id>:<tier>`);
  if (tier !== 'SemiTrusted' && tier !== 'Untrusted')
    throw new Error(`"${tier}" is not SemiTrusted or Untrusted (a Matrix room is at most SemiTrusted)`);
  return [room, tier];
}

/** An ed25519 key in canonical unpadded base64 (as Element shows it, spaces allowed), or a throw. */
function ed25519Fingerprint(raw: string): string {
  const key = raw.replace(/\s+/g, '').replace(/=+$/, '');
  const canonical = /^[A-Za-z0-9+/]{43}$/.test(key) ? Buffer.from(key, 'base64').toString('base64').replace(/=+$/, '') : '';
  if (canonical !== key) throw new Error(`"${raw}" is not an ed25519 key (43 base64 characters, Element's "Session key")`);
  return key;
}

/**
 * `@user:server/DEVICEID=<ed25519 key>`: a device the owner verified out of band (Element's
 * session id and session key). The server part holds no "/", so the first "/" after it ends the user id.
 */
function devicePin(item: string): { userId: string; deviceId: string; ed25519: string } {
  const m = /^(@[^:]+:[A-Za-z0-9.-]+(?::\d+)?)\/([^=/\s]+)=(.+)$/.exec(item);
  if (!m) throw new Error(`"${item}" is not @user:server/DEVICEID=<ed25519 key>`);
  return { userId: matrixId(m[1]!), deviceId: m[2]!, ed25519: ed25519Fingerprint(m[3]!) };
}

function hopMta(raw: string): 'postfix' | 'exim' {
  const v = raw.trim().toLowerCase();
  if (v !== 'postfix' && v !== 'exim') throw new Error('must be postfix or exim');
  return v;
}

function temporalAddress(raw: string): string {
  if (!/^(\[[0-9A-Fa-f:.]+\]|[^\s:/[\]]+):\d{1,5}$/.test(raw.trim())) throw new Error('must be host:port, e.g. temporal.internal:7233');
  return raw.trim();
}

function postgresUrl(raw: string): string {
  if (!URL.canParse(raw) || !/^postgres(ql)?:$/.test(new URL(raw).protocol))
    throw new Error('must be a postgres:// URL, e.g. postgres://postgres@127.0.0.1:5432/aivyx');
  return raw;
}

/** The table. Keys are the variable names; order is docs/CONFIG.md's order. */
/**
 * A worker's workflow cache. A cached workflow costs about 180 KiB of worker memory (its own state;
 * every module is shared: workflows/sandbox-shared.ts), and a waiting mission or an idle session needs none of it
 * until its next task, when it replays from history; the SDK's default (one per MiB of heap: thousands)
 * would keep every waiting mission resident, without bound. 100 keeps a busy worker's active turns and
 * missions cached (32 missions started at once keep about 64 workflows active; a cache smaller than
 * what is active at once evicts workflows mid-turn and halves the start rate: measured,
 * docs/BENCHMARKS.md). Chosen when a cached workflow cost 0.9 MiB: at 1,000 waiting missions the worker
 * grew by 204 MiB at 100, 478 MiB at 200, 853 MiB with all cached and 82 MiB at the minimum, and 100
 * started missions fastest. At 180 KiB each, 100 cached take about 18 MiB.
 * The minimum is what a worker runs at once (the SDK's maxConcurrentWorkflowTaskExecutions).
 */
export const DEFAULT_WORKFLOW_CACHE = 100;
export const MIN_WORKFLOW_CACHE = 40;

export const ENV_TABLE = {
  // --- storage and keys
  AIVYX_HOME: envVar({
    group: 'storage',
    default: '`./.aivyx`',
    meaning:
      "data directory: PGlite, the dev server's SQLite file, tokens, logs; no tool reaches it below Kernel, at any tier, except its `workspace/` folder (docs/TOOLS.md)",
    schema: text('.aivyx'),
  }),
  AIVYX_PASSPHRASE: envVar({
    group: 'storage',
    default: '(prompt)',
    meaning: 'the passphrase the master key is derived from (no default)',
    sensitive: true,
    schema: text(),
  }),
  AIVYX_PASSPHRASE_FILE: envVar({
    group: 'storage',
    default: '(prompt)',
    meaning: 'a file holding the passphrase (refused unless mode 0600)',
    sensitive: true,
    schema: text(),
  }),
  DATABASE_URL: envVar({
    group: 'storage',
    default: 'unset → PGlite',
    meaning: 'PostgreSQL, e.g. `postgres://postgres@127.0.0.1:5432/aivyx` (its password is never printed)',
    schema: parsedBy<string | undefined>(undefined, postgresUrl),
  }),
  // --- Temporal
  TEMPORAL_ADDRESS: envVar({
    group: 'temporal',
    default: 'unset → dev server',
    meaning: 'an existing Temporal cluster (`host:7233`); retention and search attributes are set up on it',
    schema: parsedBy<string | undefined>(undefined, temporalAddress),
  }),
  TEMPORAL_NAMESPACE: envVar({
    group: 'temporal',
    default: '`default`',
    meaning: "the Temporal namespace: one install's own (another install's is refused; docs/DEPLOY.md)",
    schema: text('default'),
  }),
  TEMPORAL_TLS_CLIENT_CERT_PATH: envVar({
    group: 'temporal',
    default: 'unset',
    meaning: 'mTLS to the cluster: the client certificate (PEM file); with `TEMPORAL_TLS_CLIENT_KEY_PATH`',
    schema: text(),
  }),
  TEMPORAL_TLS_CLIENT_KEY_PATH: envVar({
    group: 'temporal',
    default: 'unset',
    meaning: "mTLS: the client certificate's private key (PEM file)",
    schema: text(),
  }),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: envVar({
    group: 'temporal',
    default: "unset → the system's roots",
    meaning: "TLS: the CA that signed the cluster's certificate (PEM file)",
    schema: text(),
  }),
  TEMPORAL_TLS_SERVER_NAME: envVar({
    group: 'temporal',
    default: 'unset',
    meaning: "TLS: the name to expect in the cluster's certificate",
    schema: text(),
  }),
  TEMPORAL_API_KEY: envVar({
    group: 'temporal',
    default: 'unset',
    meaning: 'an API key for the cluster (Temporal Cloud), sent over TLS (never printed)',
    sensitive: true,
    schema: text(),
  }),
  TEMPORAL_CLI_PATH: envVar({
    group: 'temporal',
    default: '`.venv/bin/temporal`, then `PATH`',
    meaning: 'the Temporal CLI that runs the dev server',
    schema: text(),
  }),
  AIVYX_TASK_QUEUE: envVar({
    group: 'temporal',
    default: "`aivyx-<id>`: the install's identity (8 hex digits, from its key)",
    meaning: 'the task queue the worker polls (set: the same value in every process of the install)',
    schema: text(),
  }),
  AIVYX_HOST_QUEUE: envVar({
    group: 'temporal',
    default: '(unset: host tools run on the shared queue)',
    meaning:
      'the task queue of the host that owns the files: fs, shell, git and MCP calls run only on workers polling it (every process of an install sets the same value; `aivyx worker --no-host-tools` does not poll it)',
    schema: text(),
  }),
  AIVYX_WORKFLOW_CACHE: envVar({
    group: 'temporal',
    default: `\`${DEFAULT_WORKFLOW_CACHE}\``,
    meaning: `how many workflows a worker keeps in memory (about 180 KiB each): the least recently used waiting mission or idle session beyond it is evicted and replays from its history when it next has work (at least ${MIN_WORKFLOW_CACHE}: the tasks a worker runs at once)`,
    schema: integer(DEFAULT_WORKFLOW_CACHE, MIN_WORKFLOW_CACHE, 'a number of workflows'),
  }),
  AIVYX_TEMPORAL_PORT: envVar({
    group: 'temporal',
    default: '`7233`',
    meaning: "the dev server's gRPC port (0: any free port)",
    schema: port(7233, 0),
  }),
  AIVYX_UI_PORT: envVar({
    group: 'temporal',
    default: '`8233`',
    meaning:
      "the dev server's own Temporal UI port (it shows payloads encoded; `aivyx up` serves it decoded at the codec server's address) (0: any free port)",
    schema: port(8233, 0),
  }),
  AIVYX_CODEC_PORT: envVar({
    group: 'temporal',
    default: '`8234`',
    meaning:
      'the codec server on 127.0.0.1, which also serves the Temporal UI decoded: a stable port, so its address can be bookmarked (0: any free port)',
    schema: port(8234, 0),
  }),
  AIVYX_REST_PORT: envVar({
    group: 'temporal',
    default: '`8787`',
    meaning: "the local REST channel's port on 127.0.0.1 (0: any free port)",
    schema: port(8787, 0),
  }),
  AIVYX_APP_PORT: envVar({
    group: 'temporal',
    default: '`8788`',
    meaning:
      "the owner's app (chat, approvals, inbox, missions, memory, audit in a browser) on 127.0.0.1; `aivyx app` prints its sign-in link (docs/APP.md) (0: any free port)",
    schema: port(8788, 0),
  }),
  // --- the model
  AIVYX_LLM: envVar({
    group: 'model',
    default: 'Ollama if it answers on localhost, else the demo script',
    meaning: '`openai:<model>`, `anthropic:<model>`, `ollama:<model>`, `scripted:<file>` (docs/LLM-PROVIDERS.md, docs/SCRIPTED-LLM.md)',
    schema: parsedBy<string | undefined>(undefined, llmSpec),
  }),
  AIVYX_OLLAMA_MODEL: envVar({
    group: 'model',
    default: '`llama3.2`',
    meaning: 'the model used when Ollama is found on localhost and `AIVYX_LLM` is unset',
    schema: text('llama3.2'),
  }),
  AIVYX_LLM_BASE_URL: envVar({
    group: 'model',
    default: "the provider's",
    meaning: 'an OpenAI-compatible server (vLLM, llama.cpp, LM Studio, OpenRouter…) or another Anthropic endpoint',
    schema: httpUrl(),
  }),
  AIVYX_LLM_API_KEY_SECRET: envVar({
    group: 'model',
    default: 'unset',
    meaning: 'the name of the secret holding the API key (`aivyx secrets set NAME`)',
    schema: text(),
  }),
  AIVYX_LLM_API_KEY: envVar({
    group: 'model',
    default: 'unset',
    meaning: 'the API key itself, when it is not a stored secret',
    sensitive: true,
    schema: text(),
  }),
  AIVYX_LLM_MAX_TOKENS: envVar({
    group: 'model',
    default: "the provider's",
    meaning: 'max output tokens per step (Anthropic)',
    schema: integer(undefined, 1, 'a whole number'),
  }),
  // --- the agent
  AIVYX_TURN_BUDGET_MS: envVar({
    group: 'agent',
    default: '`300000`',
    meaning: 'a turn past this many milliseconds ends `TimedOut`',
    schema: integer(300_000, 1, 'a number of milliseconds'),
  }),
  AIVYX_ATTACHMENT_MAX_BYTES: envVar({
    group: 'agent',
    default: '`5242880` (5 MiB)',
    meaning:
      'the largest file `fs.attach` hands over (sealed in the store, then sent: a photo or document on Telegram, a mail attachment, a download in the app and the CLI); a larger one is refused and nothing is sent',
    schema: integer(5_242_880, 1, 'a number of bytes'),
  }),
  AIVYX_ATTACHMENT_TTL: envVar({
    group: 'agent',
    default: '`30d`',
    meaning:
      'how long a stored attachment is kept: `90s`, `24h`, `30d`…; after that it is not served (as if it never existed) and its sealed rows are deleted (at start and every six hours). A month: long enough to come back to a file in the app or REST, short enough that sealed copies of your files do not pile up; Telegram and e-mail keep their own copy',
    schema: parsedBy(DEFAULT_ATTACHMENT_TTL_MS, attachmentTtl),
  }),
  AIVYX_PRICES: envVar({
    group: 'agent',
    default: 'none (tokens only)',
    meaning:
      'model prices in US dollars per million tokens, JSON keyed like `AIVYX_LLM`: `{"openai:gpt-4o": {"inputPerMTok": 2.5, "outputPerMTok": 10}}`; a model not in it counts tokens only (docs/BUDGETS.md)',
    schema: parsedBy({}, parsePrices),
  }),
  AIVYX_TURN_TOKEN_BUDGET: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'a turn whose model steps reach this many tokens (input + output) stops, `TimedOut` with reason budget',
    schema: integer(undefined, 1, 'a number of tokens'),
  }),
  AIVYX_TURN_COST_BUDGET: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'the same in US dollars (priced models only, `AIVYX_PRICES`)',
    schema: parsedBy(undefined, dollars),
  }),
  AIVYX_SESSION_DAY_TOKEN_BUDGET: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'tokens one conversation may use per UTC day; once reached, its turns stop before their next model step',
    schema: integer(undefined, 1, 'a number of tokens'),
  }),
  AIVYX_SESSION_DAY_COST_BUDGET: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'the same in US dollars',
    schema: parsedBy(undefined, dollars),
  }),
  AIVYX_MISSION_TOKEN_BUDGET: envVar({
    group: 'agent',
    default: 'none',
    meaning:
      "a mission's token budget when its definition names none: once reached, the mission waits at a gate asking an approver to raise it",
    schema: integer(undefined, 1, 'a number of tokens'),
  }),
  AIVYX_MISSION_COST_BUDGET: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'the same in US dollars',
    schema: parsedBy(undefined, dollars),
  }),
  AIVYX_SESSION_IDLE_MS: envVar({
    group: 'agent',
    default: '`86400000` (a day)',
    meaning: 'a conversation closes after this many milliseconds without a message (the next one re-opens it, with its history)',
    schema: integer(86_400_000, 1000, 'a number of milliseconds'),
  }),
  AIVYX_HISTORY_TOKENS: envVar({
    group: 'agent',
    default: '`8000`',
    meaning:
      'tokens the conversation history and the new message may take in one prompt; past it, older turns are summarised (docs/LLM-PROVIDERS.md)',
    schema: integer(8000, 500, 'a number of tokens'),
  }),
  AIVYX_CAPABILITIES: envVar({
    group: 'agent',
    default: DEFAULT_AGENT_CAPABILITIES.map((c) => `\`${c}\``).join(', '),
    meaning: "the agent's own scopes (comma-separated), before the tier ceiling",
    schema: list(DEFAULT_AGENT_CAPABILITIES, scope),
  }),
  AIVYX_CONFIRM_DESTRUCTIVE: envVar({
    group: 'agent',
    default: '`on`',
    meaning: `confirm-first for ${DEFAULT_CONFIRM_FIRST.map((t) => `\`${t}\``).join(', ')}: they ask for approval (a gate, \`aivyx mission approve <gate>\`) instead of running; \`off\` disables it`,
    schema: onOff(true),
  }),
  AIVYX_CONFIRM_FIRST: envVar({
    group: 'agent',
    default: 'unset',
    meaning: 'the confirm-first tools, listed explicitly (comma-separated; empty: none); overrides `AIVYX_CONFIRM_DESTRUCTIVE`',
    schema: list(undefined, toolId),
  }),
  // --- untrusted content (docs/SECURITY.md): after it, effects and egress need a person
  AIVYX_TAINT_POLICY: envVar({
    group: 'agent',
    default: 'every effect or egress tool `gate`',
    meaning:
      'what a turn that has read untrusted content does with each effect or egress tool: `tool=gate|deny|allow`, comma-separated (e.g. `net.post=deny`); reads are never stopped',
    schema: parsedBy({}, (raw) => parseTaintPolicy(raw, TOOL_CATALOG)),
  }),
  AIVYX_TRUSTED_ROOTS: envVar({
    group: 'agent',
    default: 'none',
    meaning:
      "directories holding the owner's own files (comma-separated, `~` expands): reading them does not taint a turn; every other file does",
    schema: list([]),
  }),
  AIVYX_OWNER_IDS: envVar({
    group: 'agent',
    default: 'none',
    meaning:
      "your own identities on remote channels, `<channel>:<sender>` (e.g. `telegram:12345,email:me@example.org`): your messages there do not taint a turn (their tier is unchanged); anyone else's do; only you (these and the CLI/REST owner) may approve a call that follows untrusted content",
    schema: list([]),
  }),
  AIVYX_TIME_ZONE: envVar({
    group: 'agent',
    default: "the system's zone",
    meaning:
      'your time zone (an IANA name such as `Europe/Berlin`): what `aivyx mission create --at "tomorrow 09:00"` means without `--time-zone`',
    schema: parsedBy(undefined, (raw: string): string | undefined => {
      checkTimeZone(raw);
      return raw;
    }),
  }),
  AIVYX_SHOW_UNTRUSTED: envVar({
    group: 'agent',
    default: "`shell.exec`, `shell.spawn`, `git.status`, `git.diff`, `audit.read` (your own machine's programs and logs)",
    meaning:
      "tools (or `mcp.call:<server>`) whose untrusted results the model is shown as they are (comma-separated; empty: none), tainting the conversation; every other untrusted result (a page, a file outside the trusted roots, an MCP server's output, a memory written from those) is held as a value the model passes on by reference and reads only through `value.read` (docs/SECURITY.md)",
    schema: list(DEFAULT_SHOWN_UNTRUSTED, shownSource),
  }),
  AIVYX_MCP_TOOLS: envVar({
    group: 'mcp',
    default: 'none',
    meaning:
      'how you classify MCP tools: `server/tool=read` (never stopped) or `server/tool=content:arg+arg` (those arguments carry only content; the rest must come from you after untrusted content), comma-separated; an unclassified MCP tool is an effect',
    schema: parsedBy({}, parseMcpClassification),
  }),
  AIVYX_MCP_TRUST_HINTS: envVar({
    group: 'mcp',
    default: 'none',
    meaning:
      "MCP servers whose own declarations you believe (comma-separated names): a tool such a server declares read-only (`readOnlyHint`) is classified `read`; your `AIVYX_MCP_TOOLS` still wins, and every other server's declarations are ignored",
    schema: list([]),
  }),
  AIVYX_MCP_TRUSTED: envVar({
    group: 'mcp',
    default: 'none',
    meaning: "MCP servers whose output the owner vouches for (comma-separated names); every other server's output taints a turn",
    schema: list([]),
  }),
  // --- what a SemiTrusted channel may reach: ▲ ceiling entries hold only these qualifiers (infra/tier-policy.ts, docs/TOOLS.md)
  AIVYX_SEMITRUSTED_FS: envVar({
    group: 'agent',
    default: '`<AIVYX_HOME>/workspace/**`',
    meaning: 'path globs a SemiTrusted turn may read and write (`~` expands; never the data directory)',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_FS_READ: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'more path globs a SemiTrusted turn may only read',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_GIT: envVar({
    group: 'agent',
    default: '`<AIVYX_HOME>/workspace/**`',
    meaning: 'repositories (path globs) a SemiTrusted turn may read with git.status/git.diff',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_NET_POST: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'URL prefixes a SemiTrusted turn may POST to',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_CHANNEL_SEND: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'channel names (globs) a SemiTrusted turn may send on',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_CHANNEL_RECEIVE: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'channel names (globs) a SemiTrusted turn may read',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_MEMORY_FORGET: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'memory partitions a SemiTrusted turn may forget (docs/MEMORY.md)',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_MISSION_CREATE: envVar({
    group: 'agent',
    default: 'none',
    meaning: 'the missions a SemiTrusted turn may create: `notify` (reminders: waits and notices only) or `turns` (docs/MISSIONS.md)',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_MISSION_LIST: envVar({
    group: 'agent',
    default: 'none',
    meaning: '`own`: a SemiTrusted turn may list the missions that name its sender (docs/MISSIONS.md)',
    schema: text(),
  }),
  AIVYX_SEMITRUSTED_MISSION_CANCEL: envVar({
    group: 'agent',
    default: 'none',
    meaning: '`own`: a SemiTrusted turn may cancel the missions that name its sender (confirm-first; docs/MISSIONS.md)',
    schema: text(),
  }),
  // --- the audit log (docs/AUDIT.md)
  AIVYX_AUDIT_CHECKPOINT_EVERY: envVar({
    group: 'agent',
    default: '`256`',
    meaning: 'a signed audit checkpoint at least every this many entries (0: only at turn/mission ends and on the timer)',
    schema: integer(256, 0, 'a number of entries'),
  }),
  AIVYX_AUDIT_CHECKPOINT_SECONDS: envVar({
    group: 'agent',
    default: '`60`',
    meaning: '…and every this many seconds while the log grows (0: no timer)',
    schema: integer(60, 0, 'a number of seconds'),
  }),
  AIVYX_AUDIT_DIGEST: envVar({
    group: 'agent',
    default: 'none',
    meaning: "send the day's signed checkpoint to the owner: `telegram:<chat id>`",
    schema: parsedBy<AuditDigestTarget | undefined>(undefined, parseAuditDigestTarget),
  }),
  // --- MCP
  // --- specialists (issue 33, docs/SPECIALISTS.md): helpers a lead turn delegates to with agent.delegate
  AIVYX_SPECIALISTS: envVar({
    group: 'agent',
    default: '`researcher` (web and memory reads) and `writer` (writes under `<AIVYX_HOME>/workspace/notes`)',
    meaning:
      "the specialists a turn may delegate to: a JSON list, or the path of a JSON file, of `{name, instructions, capabilities, model?, budget?: {tokens?, costUsd?}, parallel?}`; each runs with at most its capabilities ∩ the asking turn's",
    schema: parsedBy(undefined, (raw: string): Specialist[] | undefined => parseSpecialists(specialistsText(raw))),
  }),
  AIVYX_MCP_SERVERS: envVar({
    group: 'mcp',
    default: 'none',
    meaning: 'MCP servers (JSON list, stdio or streamable HTTP) whose tools run as `mcp.call` (may hold tokens: never printed)',
    sensitive: true,
    schema: parsedBy([], parseMcpServers),
  }),
  AIVYX_MCP_TIERS: envVar({
    group: 'mcp',
    default: 'none',
    meaning: 'tiers opted in to MCP tools, e.g. `Trusted=mcp.call:echo/*` (granted to no tier by default)',
    schema: parsedBy({}, parseMcpTierGrants),
  }),
  // --- Telegram (docs/TELEGRAM.md)
  AIVYX_TELEGRAM_TOKEN_SECRET: envVar({
    group: 'telegram',
    default: 'unset → no Telegram',
    meaning: 'the name of the secret holding the bot token',
    schema: text(),
  }),
  AIVYX_TELEGRAM_ALLOWLIST: envVar({
    group: 'telegram',
    default: 'none',
    meaning: 'Telegram user ids whose DMs are SemiTrusted (comma-separated)',
    schema: list([], telegramId),
  }),
  AIVYX_TELEGRAM_CHAT_TIERS: envVar({
    group: 'telegram',
    default: 'none',
    meaning: 'per-chat tiers, e.g. `-1001:SemiTrusted,-1002:Untrusted` (at most SemiTrusted)',
    schema: list([], chatTier),
  }),
  AIVYX_TELEGRAM_MODE: envVar({
    group: 'telegram',
    default: '`polling`',
    meaning: '`polling` or `webhook`',
    schema: oneOf(['polling', 'webhook'], 'polling'),
  }),
  AIVYX_TELEGRAM_WEBHOOK_SECRET: envVar({
    group: 'telegram',
    default: 'unset',
    meaning: 'webhook mode: the name of the secret Telegram echoes in each call',
    schema: text(),
  }),
  AIVYX_TELEGRAM_WEBHOOK_PORT: envVar({
    group: 'telegram',
    default: '`8443`',
    meaning: 'webhook mode: the port the webhook listens on',
    schema: port(8443, 0),
  }),
  AIVYX_TELEGRAM_API_ROOT: envVar({
    group: 'telegram',
    default: "Telegram's",
    meaning: 'another Bot API server (tests, a local Bot API server)',
    schema: httpUrl(),
  }),
  // --- email (docs/EMAIL.md)
  AIVYX_EMAIL_ADDRESS: envVar({ group: 'email', default: 'unset → no email', meaning: "the assistant's own address", schema: text() }),
  AIVYX_EMAIL_ALLOWLIST: envVar({
    group: 'email',
    default: 'none',
    meaning: 'senders whose DKIM/SPF-verified mail is SemiTrusted (comma-separated)',
    schema: list<string>([]),
  }),
  AIVYX_EMAIL_TRUSTED_HOP: envVar({
    group: 'email',
    default: 'unset',
    meaning: 'the host (as in `by`) of the receiving MTA whose `Received` header is trusted for SPF (docs/EMAIL.md, Trust)',
    schema: text(),
  }),
  AIVYX_EMAIL_TRUSTED_HOP_MTA: envVar({
    group: 'email',
    default: 'unset',
    meaning: "`postfix` or `exim`: the trusted hop's `Received` format, which decides where the client IP is read",
    schema: parsedBy<'postfix' | 'exim' | undefined>(undefined, hopMta),
  }),
  AIVYX_EMAIL_AUTHSERV_ID: envVar({
    group: 'email',
    default: 'unset',
    meaning: "the authserv-id of the topmost `Authentication-Results` header to take SPF from (your receiving MTA's)",
    schema: text(),
  }),
  AIVYX_EMAIL_TRUSTED_RECEIVER: envVar({
    group: 'email',
    default: 'unset',
    meaning: 'no longer read: refused at start (use `AIVYX_EMAIL_TRUSTED_HOP`)',
    schema: text(),
  }),
  AIVYX_EMAIL_BACKLOG: envVar({
    group: 'email',
    default: '`new`',
    meaning: '`new` (mail arriving from now on) or `all` (the whole mailbox) on first start',
    schema: oneOf(['new', 'all'], undefined),
  }),
  AIVYX_EMAIL_MAX_ATTACHMENT_BYTES: envVar({
    group: 'email',
    default: "the channel's",
    meaning: 'attachments above this size are dropped',
    schema: integer(undefined, 0, 'a byte count'),
  }),
  AIVYX_EMAIL_IMAP_HOST: envVar({ group: 'email', default: 'required', meaning: 'IMAP server', schema: text() }),
  AIVYX_EMAIL_IMAP_PORT: envVar({ group: 'email', default: '`993`', meaning: 'IMAP port', schema: port(993) }),
  AIVYX_EMAIL_IMAP_SECURE: envVar({
    group: 'email',
    default: 'on for port 993',
    meaning: 'TLS from the first byte',
    schema: onOff(undefined),
  }),
  AIVYX_EMAIL_IMAP_STARTTLS: envVar({
    group: 'email',
    default: "imapflow's",
    meaning: '`required`, `opportunistic` or `never`',
    schema: oneOf(['required', 'opportunistic', 'never'], undefined),
  }),
  AIVYX_EMAIL_IMAP_USER: envVar({ group: 'email', default: 'the address', meaning: 'IMAP login', schema: text() }),
  AIVYX_EMAIL_IMAP_PASSWORD_SECRET: envVar({
    group: 'email',
    default: 'required',
    meaning: 'the name of the secret holding the IMAP password',
    schema: text(),
  }),
  AIVYX_EMAIL_IMAP_MAILBOX: envVar({ group: 'email', default: '`INBOX`', meaning: 'the mailbox read', schema: text('INBOX') }),
  AIVYX_EMAIL_SMTP_HOST: envVar({ group: 'email', default: 'required', meaning: 'SMTP server', schema: text() }),
  AIVYX_EMAIL_SMTP_PORT: envVar({ group: 'email', default: '`587`', meaning: 'SMTP port', schema: port(587) }),
  AIVYX_EMAIL_SMTP_SECURE: envVar({
    group: 'email',
    default: 'on for port 465',
    meaning: 'TLS from the first byte',
    schema: onOff(undefined),
  }),
  AIVYX_EMAIL_SMTP_REQUIRE_TLS: envVar({
    group: 'email',
    default: 'on for port 587',
    meaning: 'refuse to send without STARTTLS',
    schema: onOff(undefined),
  }),
  AIVYX_EMAIL_SMTP_AUTH: envVar({ group: 'email', default: '`on`', meaning: 'log in to the SMTP server', schema: onOff(true) }),
  AIVYX_EMAIL_SMTP_USER: envVar({ group: 'email', default: 'the IMAP login', meaning: 'SMTP login', schema: text() }),
  AIVYX_EMAIL_SMTP_PASSWORD_SECRET: envVar({
    group: 'email',
    default: 'the IMAP secret',
    meaning: 'the name of the secret holding the SMTP password',
    schema: text(),
  }),
  // --- Matrix (docs/MATRIX.md)
  AIVYX_MATRIX_HOMESERVER: envVar({
    group: 'channels',
    default: 'unset → no Matrix',
    meaning: 'Matrix: the homeserver URL',
    schema: httpUrl(),
  }),
  AIVYX_MATRIX_USER_ID: envVar({
    group: 'channels',
    default: 'unset',
    meaning: "Matrix: the assistant's user id (`@bot:example.org`)",
    schema: parsedBy(undefined, matrixId),
  }),
  AIVYX_MATRIX_TOKEN_SECRET: envVar({
    group: 'channels',
    default: 'unset',
    meaning: 'Matrix: the name of the secret holding the access token',
    schema: text(),
  }),
  AIVYX_MATRIX_ALLOWLIST: envVar({
    group: 'channels',
    default: 'none',
    meaning: 'Matrix user ids whose direct chats are SemiTrusted (comma-separated)',
    schema: list([], matrixId),
  }),
  AIVYX_MATRIX_ROOM_TIERS: envVar({
    group: 'channels',
    default: 'none',
    meaning: 'Matrix per-room tiers, e.g. `!abc:example.org:SemiTrusted` (at most SemiTrusted)',
    schema: list([], roomTier),
  }),
  AIVYX_MATRIX_VERIFIED_DEVICES: envVar({
    group: 'channels',
    default: 'none → every encrypted message Untrusted',
    meaning:
      "Matrix devices verified out of band, `@you:example.org/DEVICEID=<ed25519 session key>` (comma-separated): their encrypted messages get their sender's tier",
    schema: list([], devicePin),
  }),
  // New channels go above this line (docs/CONTRIBUTING.md, "Adding a channel"): one line per variable, group `channels`.
  // --- logs and traces (docs/OBSERVABILITY.md)
  AIVYX_LOG_FORMAT: envVar({
    group: 'telemetry',
    default: '`text`',
    meaning: '`json`: one JSON object per log line on stderr (secrets, message text and tool inputs redacted), for a log pipeline',
    schema: oneOf(LOG_FORMATS, 'text'),
  }),
  // traces: off unless an OTLP endpoint is set
  OTEL_EXPORTER_OTLP_ENDPOINT: envVar({
    group: 'telemetry',
    default: 'unset → no traces',
    meaning:
      'an OTLP/HTTP collector (Jaeger, Tempo, an OpenTelemetry Collector), e.g. `http://127.0.0.1:4318`: traces go to its `/v1/traces`',
    schema: httpUrl(),
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: envVar({
    group: 'telemetry',
    default: 'unset',
    meaning: 'the full OTLP/HTTP traces URL (used as is); overrides `OTEL_EXPORTER_OTLP_ENDPOINT` for traces',
    schema: httpUrl(),
  }),
  OTEL_EXPORTER_OTLP_HEADERS: envVar({
    group: 'telemetry',
    default: 'unset',
    meaning: "headers sent to the collector, `key=value,…` (e.g. a vendor's API key: never printed)",
    sensitive: true,
    schema: text(),
  }),
  OTEL_SERVICE_NAME: envVar({
    group: 'telemetry',
    default: '`aivyx`',
    meaning: "the traces' `service.name` (each process also reports its own `service.instance.id` and pid)",
    schema: text('aivyx'),
  }),
};

/** A variable's name. */
export type EnvName = keyof typeof ENV_TABLE;

/** Every variable's parsed value. */
export type EnvValues = { [K in EnvName]: (typeof ENV_TABLE)[K] extends { schema: { _zod: { output: infer T } } } ? T : never };
