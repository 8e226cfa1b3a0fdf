/**
 * What an approver is shown about a pending tool call: its canonical input, per tool, as the tool
 * will use it (the catalog's own parsers: argv for shell.*, the normalized path for fs.*, the
 * canonical URL for net.*), with secrets redacted and long content cut with its size in bytes.
 * Pure and total (workflow-safe; never throws): an input no parser accepts, or a tool we do not
 * know, is shown as canonical JSON (redacted, cut). Every value is escaped, so an argument holding
 * a newline or a bidi override cannot forge a line of the request an approver reads.
 */
import { z } from 'zod';
import { describeBudget, describeSpend, spendBudgetSchema, spendSchema } from '../spend.js';
import { utf8Length } from '../limits.js';
import { parseFsReadInput } from './fs-read.js';
import { parseFsWriteInput } from './fs-write.js';
import { parseMemoryForgetInput } from './memory-forget.js';
import { parseMemoryRecallInput } from './memory-recall.js';
import { parseMemoryWriteInput } from './memory-write.js';
import { parseShellExecInput } from './shell-exec.js';
import { type MemoryFilter } from './memory-fields.js';
import { parseChannelSendInput } from './channel-send.js';
import type { MissionStepSpec } from '../mission-spec.js';
import { parseMissionCreateInput } from './mission-create.js';
import { parseMissionListInput } from './mission-list.js';
import { parseMissionCancelInput } from './mission-cancel.js';
import { parseValueReadInput } from './value-read.js';
import { parseAuditReadInput, parseConfigReadInput, parseConfigWriteInput } from './config-tools.js';
import { parseFsDeleteInput } from './fs-delete.js';
import { parseFsMetadataInput } from './fs-metadata.js';
import { parseFsAttachInput } from './fs-attach.js';
import { parseGitCommitInput, parseGitDiffInput, parseGitStatusInput } from './git-tools.js';
import { parseMcpCallInput } from './mcp-tools.js';
import { parseNetFetchInput, parseNetPostInput } from './net-tools.js';
import { parseShellSpawnInput, type CommandInput } from './shell-spawn.js';
import { parseSkillProposeInput } from './skill-propose.js';
import { parseSkillInvokeInput } from './skill-invoke.js';
import { parseSkillListInput } from './skill-list.js';
import { parseGraphWriteInput } from './graph-write.js';
import { parseGraphQueryInput } from './graph-query.js';
import { agentDelegateTool } from './agent-delegate.js';

/** A pending call as an approver reads it. */
export interface CallDescription {
  /** `label: value` lines, e.g. `argv: git commit -m "fix it"`; values escaped, secrets redacted. */
  lines: string[];
}

/** Most characters of one value shown before it is cut (its full size in bytes is given). */
export const DESCRIBE_MAX_CHARS = 300;
/** Most characters of one line (many headers, paths or arguments), so a request fits a chat message. */
export const DESCRIBE_MAX_LINE = 1000;

/** The first 12 hex characters of an input hash: enough to compare with `aivyx mission show` and the audit log. */
export function inputDigest(inputHash: string | undefined): string {
  return inputHash ? inputHash.slice(0, 12) : '?';
}

// Substrings that make a field or header name secret wherever they appear (accessToken, x-auth-token, db_password…).
const SECRET_PART = /token|secret|passw|passphrase|credential|cookie|authori[sz]ation|signature|bearer/i;
// Whole words (after splitting camelCase and separators) that do: api_key, x-api-key, sessionId — not "keyword".
const SECRET_WORDS = new Set(['key', 'apikey', 'auth', 'sig', 'session', 'sid', 'pin', 'otp', 'private', 'privatekey', 'pwd', 'pass']);

/** Whether a field, header, query parameter or variable name names a secret. */
export function isSecretName(name: string): boolean {
  if (SECRET_PART.test(name)) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => SECRET_WORDS.has(w));
}

// Control characters, Unicode format characters (bidi overrides, zero-width) and line/paragraph separators.
const UNSAFE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const BARE = /^[A-Za-z0-9_@%+=:,./~^-]+$/;

function escapeUnsafe(s: string): string {
  return s.replace(UNSAFE, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\t') return '\\t';
    if (c === '\r') return '\\r';
    const cp = c.codePointAt(0) ?? 0;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, '0')}`;
  });
}

/**
 * `s` within {@link DESCRIBE_MAX_CHARS} characters, with a note of its full size when cut. It is cut
 * in the middle, keeping both ends: what decides where a URL or a command goes is as often at its
 * end (a query, a last argument) as at its start, and an approver must see both.
 */
function cut(s: string): { text: string; note: string } {
  if (s.length <= DESCRIBE_MAX_CHARS) return { text: s, note: '' };
  return { text: middleCut(s, DESCRIBE_MAX_CHARS), note: ` (cut in the middle; ${utf8Length(s)} bytes in all)` };
}

/** The first two thirds and the last third of `max` characters of `s`, joined by "…". */
function middleCut(s: string, max: number): string {
  const head = Math.ceil((max * 2) / 3);
  return `${s.slice(0, head)}…${s.slice(s.length - (max - head))}`;
}

/** A free text as a quoted, escaped (and, when long, cut) string. */
function quoted(s: string): string {
  const { text, note } = cut(s);
  return `"${escapeUnsafe(text).replace(/"/g, '\\"')}"${note}`;
}

/** A value that needs no quotes (a canonical URL), escaped and cut. */
function plain(s: string): string {
  const { text, note } = cut(s);
  return `${escapeUnsafe(text)}${note}`;
}

/** A word (path, name, argument) bare when it is plainly one, else quoted. */
function word(s: string): string {
  return BARE.test(s) && s.length <= DESCRIBE_MAX_CHARS ? s : quoted(s);
}

function redacted(value: string): string {
  return `[redacted, ${utf8Length(value)} bytes]`;
}

// `--password=x`, `TOKEN=x`, `-Dapi.key=x`: the name is shown, the value is not.
const ASSIGNMENT = /^(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=([\s\S]*)$/;
// A header given as one argument (`curl -H "Authorization: Bearer …"`).
const HEADER_ARG = /^([A-Za-z0-9-]+)\s*:\s*([\s\S]*)$/;
// Userinfo in a URL argument (`https://user:pass@host/`).
const URL_USERINFO = /^([a-z][a-z0-9+.-]*:\/\/[^/:@\s]*):[^/@\s]*@/i;

/** One argv element with any secret it carries redacted. */
function redactArg(arg: string): string {
  const assign = ASSIGNMENT.exec(arg);
  if (assign?.[1] && assign[2] !== undefined && isSecretName(assign[1])) return `${assign[1]}=${redacted(assign[2])}`;
  const header = HEADER_ARG.exec(arg);
  if (header?.[1] && header[2] !== undefined && isSecretName(header[1])) return `${header[1]}: ${redacted(header[2])}`;
  return arg.replace(URL_USERINFO, '$1:[redacted]@');
}

/** argv as a command line: bare words as they are, anything else quoted; secrets redacted. */
function argvLine(argv: readonly string[]): string {
  return argv
    .map((a) => {
      const r = redactArg(a);
      return r === a ? word(a) : r.includes('[redacted') ? r : word(r);
    })
    .join(' ');
}

/** A canonical URL (no spaces, percent-encoded) with the values of secret-named query parameters redacted. */
function urlLine(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return plain(url);
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && isSecretName(decodeName(name)) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return plain(`${url.slice(0, q)}?${query}`);
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function headerLines(headers: Record<string, string>): string[] {
  const names = Object.keys(headers).sort();
  if (names.length === 0) return [];
  return [`headers: ${names.map((n) => `${n}: ${isSecretName(n) ? redacted(headers[n] ?? '') : word(headers[n] ?? '')}`).join('; ')}`];
}

/** A JSON value with secret-named fields redacted (recursively), for display only. */
function redactJson(value: unknown, depth = 0): unknown {
  if (depth > 32) return '[too deep]';
  if (Array.isArray(value)) return value.map((v) => redactJson(v, depth + 1));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      out[k] =
        isSecretName(k) && v !== null && v !== undefined ? redacted(typeof v === 'string' ? v : stableJson(v)) : redactJson(v, depth + 1);
    return out;
  }
  return value;
}

/** JSON with object keys sorted (display only; hashing uses RFC 8785 in the activities). */
function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => stableJson(v ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`)
      .join(',')}}`;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
  return JSON.stringify(value) ?? 'null';
}

/** A JSON value as one redacted, escaped, cut line. */
function jsonLine(value: unknown): string {
  return plain(stableJson(redactJson(value)));
}

function commandLines(input: CommandInput & { timeoutMs?: number; maxDurationMs?: number }): string[] {
  return [
    `argv: ${argvLine(input.argv)}`,
    ...(input.cwd !== undefined ? [`cwd: ${word(input.cwd)}`] : []),
    ...(input.timeoutMs !== undefined ? [`timeout: ${input.timeoutMs} ms`] : []),
    ...(input.maxDurationMs !== undefined ? [`max duration: ${input.maxDurationMs} ms`] : []),
  ];
}

function filterLines(f: MemoryFilter & { from?: number; to?: number }): string[] {
  return [
    ...(f.session !== undefined ? [`session: ${word(f.session)}`] : []),
    ...(f.topic !== undefined ? [`topic: ${word(f.topic)}`] : []),
    ...(f.public ? ['public: yes'] : []),
    ...(f.from !== undefined ? [`from: ${new Date(f.from).toISOString()}`] : []),
    ...(f.to !== undefined ? [`to: ${new Date(f.to).toISOString()}`] : []),
  ];
}

const pathsLine = (paths: readonly string[] | undefined): string[] => (paths ? [`paths: ${paths.map(word).join(' ')}`] : []);

/** Per tool: its parser's canonical input as lines. Each may throw (the input does not parse). */
/** One drafted mission step, as its approver reads it (every value quoted or escaped). */
function specStepLine(s: MissionStepSpec): string {
  if (typeof s === 'string') return `task ${quoted(s)}`;
  if ('wait' in s) return `wait ${word(String(s.wait))}`;
  if ('notify' in s) return `notify the owner ${quoted(s.notify)}`;
  if ('waitUntil' in s) return `wait until ${word(s.waitUntil)}${s.timeZone ? ` (${word(s.timeZone)})` : ''}`;
  const w = s.waitFor;
  const what =
    'approval' in w
      ? `a yes from an approver to ${quoted(w.approval)}`
      : 'email' in w
        ? `an e-mail from ${word(w.email.from)}${w.email.thread ? ` in thread ${word(w.email.thread)}` : ''}`
        : 'telegram' in w
          ? `a Telegram message${w.telegram.from ? ` from ${word(w.telegram.from)}` : ''}${
              w.telegram.contains ? ` containing ${quoted(w.telegram.contains)}` : ''
            }`
          : `a Matrix message${w.matrix.from ? ` from ${word(w.matrix.from)}` : ''}${w.matrix.room ? ` in ${word(w.matrix.room)}` : ''}${
              w.matrix.contains ? ` containing ${quoted(w.matrix.contains)}` : ''
            }`;
  return `wait up to ${word(String(s.within))} for ${what}; if it comes: ${s.onEvent ?? 'continue'}; if not: ${s.onTimeout ?? 'end'} the mission`;
}

const DESCRIBERS: Record<string, (input: unknown) => string[]> = {
  'shell.exec': (i) => commandLines(parseShellExecInput(i)),
  'shell.spawn': (i) => commandLines(parseShellSpawnInput(i)),
  'fs.read': (i) => {
    const p = parseFsReadInput(i);
    return [`path: ${word(p.path)}`, ...(p.maxBytes !== undefined ? [`max bytes: ${p.maxBytes}`] : [])];
  },
  'fs.write': (i) => {
    const p = parseFsWriteInput(i);
    return [`path: ${word(p.path)}`, `mode: ${p.mode}`, `content: ${utf8Length(p.content)} bytes: ${quoted(p.content)}`];
  },
  'fs.delete': (i) => {
    const p = parseFsDeleteInput(i);
    return [`path: ${word(p.path)}`, `recursive: ${p.recursive ? 'yes (the whole tree)' : 'no'}`];
  },
  'fs.metadata': (i) => [`path: ${word(parseFsMetadataInput(i).path)}`],
  'fs.attach': (i) => [`path: ${word(parseFsAttachInput(i).path)}`],
  'net.fetch': (i) => {
    const p = parseNetFetchInput(i);
    return [
      `request: ${p.method} ${urlLine(p.url)}`,
      ...headerLines(p.headers),
      ...(p.maxBytes !== undefined ? [`max bytes: ${p.maxBytes}`] : []),
      ...(p.timeoutMs !== undefined ? [`timeout: ${p.timeoutMs} ms`] : []),
    ];
  },
  'net.post': (i) => {
    const p = parseNetPostInput(i);
    return [
      `request: ${p.method} ${urlLine(p.url)}`,
      ...headerLines(p.headers),
      p.body === undefined ? 'body: none' : `body: ${p.contentType ?? 'no content type'}, ${utf8Length(p.body)} bytes: ${quoted(p.body)}`,
    ];
  },
  'git.status': (i) => [`repo: ${word(parseGitStatusInput(i).repo)}`],
  'git.diff': (i) => {
    const p = parseGitDiffInput(i);
    return [`repo: ${word(p.repo)}`, `staged: ${p.staged ? 'yes' : 'no'}`, ...pathsLine(p.paths)];
  },
  'git.commit': (i) => {
    const p = parseGitCommitInput(i);
    return [`repo: ${word(p.repo)}`, `message: ${quoted(p.message)}`, ...pathsLine(p.paths)];
  },
  'channel.send': (i) => {
    const p = parseChannelSendInput(i);
    return [`channel: ${word(p.channel)}`, `to: ${word(p.to)}`, `text: ${utf8Length(p.text)} bytes: ${quoted(p.text)}`];
  },
  // The whole mission, as it will run: every step, wait and notice, and what its task steps may use.
  'mission.create': (i) => {
    const p = parseMissionCreateInput(i);
    return [
      `goal: ${quoted(p.goal)}`,
      // A notice to people: one line per recipient, so none hides behind a cut line.
      ...p.steps.flatMap((s, n) =>
        typeof s === 'object' && 'notify' in s && s.to
          ? [
              `step ${n + 1}: notify ${s.to.length === 1 ? '1 person' : `${s.to.length} people`} ${quoted(s.notify)}`,
              ...s.to.map((r) => `  to: ${word(r)}`),
            ]
          : [`step ${n + 1}: ${specStepLine(s)}`],
      ),
      `capabilities: ${p.capabilities.length > 0 ? p.capabilities.map(word).join(' ') : 'none (it runs no tools)'}`,
      ...(p.schedule
        ? [
            `recurring: ${p.schedule.cron !== undefined ? `cron ${quoted(p.schedule.cron)}` : `every ${word(String(p.schedule.every))}`}${
              p.schedule.timeZone ? ` (${word(p.schedule.timeZone)})` : ''
            }, each run a mission of its own`,
          ]
        : []),
    ];
  },
  // A waitFor step's question to the approvers (a gate-like approval).
  'mission.ask': (i) => [`question: ${quoted(String((i as { question?: unknown } | null)?.question ?? ''))}`],
  // A mission's spend budget gate: what was spent of which budget, and what it would be raised to.
  'mission.budget': (i) => {
    const r = budgetRaiseSchema.safeParse(i);
    if (!r.success) return [`request: ${jsonLine(i)}`];
    return [
      `spent: ${describeSpend(r.data.spent)}`,
      `budget: ${describeBudget(r.data.budget)}`,
      `raise to: ${describeBudget(r.data.raiseTo)}`,
    ];
  },
  // A mission's plan, drafted from its goal, before anything of it runs (the plan gate): the same view.
  'mission.plan': (i) => DESCRIBERS['mission.create']!(i),
  'mission.list': (i) => {
    const p = parseMissionListInput(i);
    return [`state: ${p.state ?? 'any'}`, `limit: ${p.limit}`];
  },
  // Which mission, and the reason its approvers will read.
  'mission.cancel': (i) => {
    const p = parseMissionCancelInput(i);
    return [`mission: ${word(p.missionId)}`, ...(p.reason !== undefined ? [`reason: ${quoted(p.reason)}`] : [])];
  },
  // What is read and what may come back: the approver sees the question, never the value.
  'value.read': (i) => {
    const p = parseValueReadInput(i);
    const as = p.as === 'number' ? `number between ${p.min} and ${p.max}` : p.as === 'choice' ? `one of ${p.choices!.join(', ')}` : p.as;
    return [`read: ${p.from.length > 80 ? `${p.from.slice(0, 79)}…` : p.from}`, `as: ${as}`, `question: ${quoted(p.question)}`];
  },
  'mcp.call': (i) => {
    const p = parseMcpCallInput(i);
    return [`tool: ${p.server}/${p.tool}`, `arguments: ${jsonLine(p.arguments)}`];
  },
  'memory.write': (i) => {
    const p = parseMemoryWriteInput(i);
    return [`text: ${quoted(p.text)}`, ...filterLines(p)];
  },
  'memory.recall': (i) => {
    const p = parseMemoryRecallInput(i);
    return [...(p.query !== undefined ? [`query: ${quoted(p.query)}`] : []), ...filterLines(p), `limit: ${p.limit}`];
  },
  'memory.forget': (i) => {
    const p = parseMemoryForgetInput(i);
    return [...(p.id !== undefined ? [`id: ${p.id}`] : []), ...filterLines(p)];
  },
  'config.read': (i) => [`key: ${parseConfigReadInput(i).key}`],
  'config.write': (i) => {
    const p = parseConfigWriteInput(i);
    return [`key: ${p.key}`, `value: ${isSecretName(p.key) ? redacted(p.value) : quoted(p.value)}`];
  },
  'audit.read': (i) => {
    const p = parseAuditReadInput(i);
    return [`type: ${p.type ?? 'any'}`, `limit: ${p.limit}`];
  },
  // The whole skill, exactly as it will be stored: every step on a line of its own, none cut (the limits keep each under the cut).
  'skills.propose': (i) => {
    const p = parseSkillProposeInput(i);
    return [
      `skill: ${word(p.name)}`,
      `summary: ${quoted(p.summary)}`,
      `when to use: ${quoted(p.whenToUse)}`,
      ...p.steps.map((step, n) => `step ${n + 1}: ${quoted(step)}`),
      `tools it expects (it grants none): ${p.tools.length > 0 ? p.tools.map(word).join(' ') : 'none'}`,
    ];
  },
  'skills.list': (i) => {
    const p = parseSkillListInput(i);
    return [p.query === undefined ? 'every approved skill: name and summary' : `skills matching: ${quoted(p.query)}`];
  },
  'skills.invoke': (i) => [`skill: ${word(parseSkillInvokeInput(i).name)}`],
  'graph.write': (i) =>
    parseGraphWriteInput(i).relations.map(
      (r) => `relation: ${quoted(r.subject.name)} (${r.subject.kind}) ${r.predicate} ${quoted(r.object.name)} (${r.object.kind})`,
    ),
  'agent.delegate': (i) => {
    const p = agentDelegateTool.parse(i);
    return [`specialist: ${word(p.specialist)}`, `task: ${quoted(p.task)}`];
  },
  'graph.query': (i) => {
    const p = parseGraphQueryInput(i);
    return [
      `from: ${quoted(p.from)}${p.kind ? ` (${p.kind})` : ''}`,
      `path: ${p.hops.map((h) => `${h.direction === 'out' ? '-' : '<-'}${h.predicate ?? 'any'}${h.direction === 'out' ? '->' : '-'}`).join(' ')}`,
      `limit: ${p.limit}`,
    ];
  },
};

/** The tools with a renderer of their own (the rest are shown as JSON). */
export const DESCRIBED_TOOLS: readonly string[] = Object.freeze(Object.keys(DESCRIBERS));

function capLine(line: string): string {
  return line.length <= DESCRIBE_MAX_LINE
    ? line
    : `${middleCut(line, DESCRIBE_MAX_LINE)} (line cut in the middle; ${line.length} characters in all)`;
}

/** How `tool` will be called with `input`, as lines an approver reads. Never throws (workflow code calls it). */
export function describeCall(tool: string, input: unknown): CallDescription {
  const describe = Object.hasOwn(DESCRIBERS, tool) ? DESCRIBERS[tool] : undefined;
  try {
    if (!describe) return { lines: [`input: ${jsonLine(input ?? null)}`] };
    try {
      return { lines: describe(input).map(capLine) };
    } catch (err) {
      // Not a call the tool would run: show what was asked, and why it does not parse.
      return {
        lines: [`input (does not parse: ${escapeUnsafe(err instanceof Error ? err.message : String(err))}): ${jsonLine(input ?? null)}`],
      };
    }
  } catch {
    return { lines: ['input: (cannot be shown)'] };
  }
}

/** The input of a budget gate (workflows/mission-messages.ts `BudgetRaise`). */
const budgetRaiseSchema = z.strictObject({ spent: spendSchema, budget: spendBudgetSchema, raiseTo: spendBudgetSchema });
