/**
 * `aivyx memory list|show|forget`: what the assistant remembers, for the owner, through the running
 * `aivyx up`'s REST channel — scope-checked and audited like the memory tools (no back door).
 */
import { parseArgs } from 'node:util';
import type { MemoryEntry, RecallResult } from '../../activities/tools/memory-port.js';
import { AivyxError } from '../../core/errors.js';
import { resolveMemoryId } from './id-lookup.js';
import { restJson, type RestTarget } from './rest-client.js';

export const MEMORY_USAGE = `usage:
  aivyx memory list [--query WORDS] [--topic T] [--limit N] [--json]   what the assistant remembers (newest and best matches first)
  aivyx memory show ID [--json]                                         one entry (ID, or its start)
  aivyx memory forget ID                                                forget one entry`;

function line(e: MemoryEntry): string {
  const tags = [e.topic ? `topic ${e.topic}` : '', e.public ? 'public' : '', e.untrusted ? `written ${e.untrusted}` : ''].filter(Boolean);
  return `${e.id}  ${new Date(e.at).toISOString()}  ${e.text.replace(/\s+/g, ' ').slice(0, 100)}${tags.length ? `  (${tags.join(', ')})` : ''}`;
}

export async function runMemoryCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { query: { type: 'string' }, topic: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  });
  // An entry id may be given by its start (a short id); core/short-id.ts.
  const id = async (): Promise<string> => {
    if (positionals.length !== 1) throw new AivyxError('Config', `memory ${sub} needs exactly one entry id`, { hint: MEMORY_USAGE });
    return encodeURIComponent(await resolveMemoryId(target, positionals[0]!));
  };
  switch (sub) {
    case 'list': {
      const q = new URLSearchParams();
      for (const k of ['query', 'topic', 'limit'] as const) if (values[k] !== undefined) q.set(k, values[k]);
      const r = (await restJson(target, 'GET', `/v1/memory${q.size ? `?${q.toString()}` : ''}`)) as RecallResult;
      if (values.json) out(`${JSON.stringify(r)}\n`);
      else if (r.entries.length === 0) out('nothing remembered that matches\n');
      else out(`${r.entries.map(line).join('\n')}\n${r.more ? '(more match: narrow with --query or --topic, or raise --limit)\n' : ''}`);
      return 0;
    }
    case 'show': {
      const e = (await restJson(target, 'GET', `/v1/memory/${await id()}`)) as MemoryEntry;
      out(values.json ? `${JSON.stringify(e)}\n` : `${line(e)}\n\n${e.text}\n`);
      return 0;
    }
    case 'forget': {
      const r = (await restJson(target, 'POST', `/v1/memory/${await id()}/forget`)) as { forgotten: number };
      out(r.forgotten === 0 ? 'nothing forgotten (no such entry)\n' : 'forgotten\n');
      return 0;
    }
    default:
      throw new AivyxError('Config', `unknown memory command "${sub ?? ''}"`, { hint: MEMORY_USAGE });
  }
}
