/**
 * The worker's half of the taint rule (core/taint.ts, docs/SECURITY.md): which inputs of a turn are
 * untrusted, and the label of each tool result. Labels are short and never hold a raw tool input
 * (they go to the audit log and to approval requests): a host, a server name, a kind of thing.
 */
import { isAbsolute, relative } from 'node:path';
import type { HistoryEntry } from '../core/channel.js';
import type { TrustTier } from '../core/capability/index.js';
import { findTool } from '../core/tool-catalog.js';
import { flatSources } from '../core/taint.js';

/** What decides a 'depends' result's label: the owner's trusted places. */
export interface TrustedPlaces {
  /** Absolute directories whose files are the owner's own (`AIVYX_TRUSTED_ROOTS`); default none. */
  roots?: readonly string[];
  /** MCP servers whose output the owner vouches for (`AIVYX_MCP_TRUSTED`); default none. */
  mcpServers?: readonly string[];
  /** The owner's own identities on remote channels, `<channel>:<sender>` (`AIVYX_OWNER_IDS`); default none. */
  owners?: readonly string[];
}

/** Labels are cut here: a sender or a server name the attacker chose cannot flood an approval request. */
const LABEL_MAX = 120;

function short(text: string): string {
  // Control characters (a crafted sender with newlines) would let a label fake lines in an approval request.
  const flat = [...text].map((c) => (c < ' ' || c === '\u007f' ? ' ' : c)).join('');
  return flat.length > LABEL_MAX ? `${flat.slice(0, LABEL_MAX - 1)}…` : flat;
}

/**
 * The turn's own message is untrusted unless a Trusted (or Kernel) channel or the owner sent it.
 * `owners` are `<channel>:<sender>` ids (`AIVYX_OWNER_IDS`, e.g. `telegram:12345`): the owner on a
 * remote channel keeps that channel's tier ceiling, but what they write is not someone else's text.
 */
export function messageLabel(
  tier: TrustTier,
  sender: string | undefined,
  channel: string,
  owners: readonly string[] = [],
): string | undefined {
  if (tier === 'Trusted' || tier === 'Kernel') return undefined;
  if (sender !== undefined && owners.includes(`${channel}:${sender}`)) return undefined;
  return short(`a message from ${sender ?? 'an unknown sender'} on ${channel} (${tier})`);
}

/**
 * The sources of the untrusted content in earlier turns of the conversation (their text is in the
 * model's context again), flat: a turn after a tainted one names the same sources, never a label of a label.
 */
export function historyLabels(history: readonly HistoryEntry[]): string[] {
  return flatSources(history.flatMap((e) => (e.untrusted ? [e.untrusted] : []))).map(short);
}

function within(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function hostOf(url: unknown): string {
  try {
    return new URL(String(url)).host || 'an unknown host';
  } catch {
    return 'an unknown host';
  }
}

/**
 * The label of a call's result (undefined: trusted). `resolvedScope` is the canonical scope the
 * activity checked (a file's real path after symlinks); `reported` is what the implementation said
 * about this particular result (a memory recall that returned an entry written after untrusted content).
 */
export function outputLabel(
  tool: string,
  input: unknown,
  resolvedScope: string | undefined,
  reported: string | undefined,
  places: TrustedPlaces,
): string | undefined {
  const def = findTool(tool);
  const fields = (input ?? {}) as Record<string, unknown>;
  if (reported) return short(reported);
  // An unknown tool (an MCP-only id, a worker newer than the catalog) is untrusted by default.
  if (!def) return short(`${tool} output`);
  if (def.provenance.output === 'trusted') return undefined;
  // A quarantined read's typed answer (a boolean, a choice, a bounded number, a date) carries no instructions.
  if (tool === 'value.read') return undefined;
  switch (def.scopeBase) {
    case 'fs.read':
    case 'fs.metadata': {
      const path = resolvedScope?.slice(def.scopeBase.length + 1) ?? '';
      return (places.roots ?? []).some((r) => isAbsolute(path) && within(path, r)) ? undefined : 'a file outside the trusted roots';
    }
    // These label each result themselves (`reported`): an entry, skill or relation keeps the label it was
    // stored with, a mission the sources its asking turn had read.
    case 'memory.read':
    case 'skills.list':
    case 'skills.invoke':
    case 'graph.read':
    case 'mission.list':
      return undefined;
    case 'mcp.call': {
      const server = String(fields.server ?? '');
      return (places.mcpServers ?? []).includes(server) ? undefined : short(`output of MCP server ${server}`);
    }
    case 'net.fetch':
      return short(`a page from ${hostOf(fields.url)}`);
    case 'net.post':
      return short(`a response from ${hostOf(fields.url)}`);
    default:
      return `${tool} output`;
  }
}
