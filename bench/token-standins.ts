/**
 * Local stand-ins for the two wire formats, for `npm run bench -- --tokens`: they read the request
 * our providers send, count its input tokens and prompt-cache hits the way each provider documents
 * them, report both in the usage of a streamed answer, and answer from a script.
 *
 * - OpenAI chat completions: tools rendered as the TypeScript-style `namespace functions` block of
 *   OpenAI's published Harmony format, then one framed message each, counted with o200k_base.
 *   Automatic prefix caching: the longest token prefix shared with an earlier request, in steps of
 *   128 tokens, once the prompt reaches 1,024.
 * - Anthropic messages: the 346-token tool-use system prompt, the tools (as JSON), the system
 *   blocks, then every content block; counted with the documented approximation of token-count.ts.
 *   A cache entry is written at each `cache_control` breakpoint of at least 1,024 tokens; a read
 *   is the longest earlier entry found at a breakpoint or up to 20 blocks before one.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { countTokens } from '../activities/llm/token-count.js';

/** What a stand-in answers: text, or tool calls (wire names). */
export type StandInReply = { text: string } | { calls: Array<{ name: string; input: unknown }> };

/** What the stand-in counted for one request. */
export interface CountedRequest {
  input: number;
  cached: number;
  /** Written to the cache by this request (Anthropic bills them at 1.25×). */
  written: number;
}

type Body = Record<string, unknown>;
type Json = Record<string, unknown>;

const MIN_CACHED = 1024;
const OPENAI_CACHE_STEP = 128;
const ANTHROPIC_TOOL_PROMPT = 346;
const ANTHROPIC_LOOKBACK = 20;
/** Per-message framing tokens (start, role, separator, end), as both formats spend them. */
const FRAMING = [-1, -2, -3];

// ---- OpenAI ---------------------------------------------------------------------------------

function tsType(s: Json, indent: string): string {
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(s.anyOf)) return (s.anyOf as Json[]).map((a) => tsType(a, indent)).join(' | ');
  const type = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  return type
    .map((t) => {
      if (t === 'object' && s.properties) return tsObject(s, indent);
      if (t === 'array') return `${s.items ? tsType(s.items as Json, indent) : 'any'}[]`;
      return t === 'integer' ? 'number' : (t ?? 'any');
    })
    .join(' | ');
}

function tsObject(s: Json, indent: string): string {
  const required = new Set((s.required as string[] | undefined) ?? []);
  const inner = `${indent}  `;
  const fields = Object.entries(s.properties as Record<string, Json>).map(([k, v]) => {
    const doc = typeof v.description === 'string' ? `${inner}// ${v.description}\n` : '';
    return `${doc}${inner}${k}${required.has(k) ? '' : '?'}: ${tsType(v, inner)},`;
  });
  return `{\n${fields.join('\n')}\n${indent}}`;
}

/** The tools as OpenAI's models read them (the Harmony format's `namespace functions`). */
export function openAiToolsText(tools: Json[]): string {
  const fns = tools.map((t) => {
    const f = t.function as Json;
    return `// ${String(f.description)}\ntype ${String(f.name)} = (_: ${tsType(f.parameters as Json, '')}) => any;`;
  });
  return `# Tools\n\n## functions\n\nnamespace functions {\n\n${fns.join('\n\n')}\n\n} // namespace functions`;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p: Json) => (typeof p.text === 'string' ? p.text : JSON.stringify(p))).join('\n');
  return '';
}

/** The prompt's tokens, in order: system message, tools, then each message framed. */
function openAiTokens(body: Body): number[] {
  const messages = body.messages as Json[];
  const out: number[] = [];
  const add = (role: string, text: string) => out.push(...FRAMING, ...encode(role), ...encode(text));
  const [first, ...rest] = messages;
  const restMessages = first?.role === 'system' ? rest : messages;
  if (first?.role === 'system') add('system', contentText(first.content));
  if (Array.isArray(body.tools) && body.tools.length > 0) add('developer', openAiToolsText(body.tools as Json[]));
  for (const m of restMessages) {
    const calls = Array.isArray(m.tool_calls) ? JSON.stringify(m.tool_calls) : '';
    add(String(m.role), contentText(m.content) + calls);
  }
  out.push(...FRAMING); // the assistant's reply is primed
  return out;
}

function sharedPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return i;
}

/** OpenAI's automatic prefix cache over every earlier request. */
export function openAiCounter(): (body: Body) => CountedRequest {
  const seen: number[][] = [];
  return (body) => {
    const tokens = openAiTokens(body);
    const longest = seen.reduce((n, s) => Math.max(n, sharedPrefix(s, tokens)), 0);
    seen.push(tokens);
    const cached = longest >= MIN_CACHED ? Math.floor(longest / OPENAI_CACHE_STEP) * OPENAI_CACHE_STEP : 0;
    return { input: tokens.length, cached, written: 0 };
  };
}

// ---- Anthropic ------------------------------------------------------------------------------

interface Block {
  text: string;
  breakpoint: boolean;
}

function withoutMark(b: Json): Json {
  const { cache_control: _mark, ...rest } = b;
  return rest;
}

/** The prompt as blocks in Anthropic's cache order: tools, system, then each message's content blocks. */
function anthropicBlocks(body: Body): Block[] {
  const blocks: Block[] = [];
  for (const t of (body.tools as Json[] | undefined) ?? [])
    blocks.push({ text: JSON.stringify(withoutMark(t)), breakpoint: 'cache_control' in t });
  const system = body.system;
  if (typeof system === 'string') blocks.push({ text: system, breakpoint: false });
  else for (const b of (system as Json[] | undefined) ?? []) blocks.push({ text: String(b.text), breakpoint: 'cache_control' in b });
  for (const m of body.messages as Json[]) {
    (m.content as Json[]).forEach((b, i) =>
      blocks.push({
        text: `${i === 0 ? `\n\n${String(m.role)}: ` : ''}${JSON.stringify(withoutMark(b))}`,
        breakpoint: 'cache_control' in b,
      }),
    );
  }
  return blocks;
}

/** Anthropic's prompt cache: entries at breakpoints, read at or up to 20 blocks before one. */
export function anthropicCounter(): (body: Body) => CountedRequest {
  const cache = new Set<string>();
  return (body) => {
    const blocks = anthropicBlocks(body);
    const base = blocks.length > 0 && Array.isArray(body.tools) && body.tools.length > 0 ? ANTHROPIC_TOOL_PROMPT : 0;
    const ends: number[] = [];
    const keys: string[] = [];
    let total = base;
    let hash = '';
    for (const b of blocks) {
      total += countTokens(b.text, 'anthropic');
      hash = createHash('sha256').update(hash).update(b.text).digest('hex');
      ends.push(total);
      keys.push(hash);
    }
    const points = blocks.flatMap((b, i) => (b.breakpoint ? [i] : []));
    let read = 0;
    for (const p of points)
      for (let j = p; j >= Math.max(0, p - ANTHROPIC_LOOKBACK); j--) if (cache.has(keys[j]!)) read = Math.max(read, ends[j]!);
    let writtenTo = read;
    for (const p of points)
      if (ends[p]! >= MIN_CACHED && !cache.has(keys[p]!)) {
        cache.add(keys[p]!);
        writtenTo = Math.max(writtenTo, ends[p]!);
      }
    return { input: total, cached: read, written: writtenTo - read };
  };
}

// ---- the servers ----------------------------------------------------------------------------

function sse(events: Array<[string | undefined, unknown]>): string {
  return events
    .map(([event, data]) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
    .join('');
}

function anthropicStream(reply: StandInReply, usage: Json, output: number): string {
  const events: Array<[string, unknown]> = [
    [
      'message_start',
      {
        type: 'message_start',
        message: { id: 'msg_bench', type: 'message', role: 'assistant', content: [], usage: { ...usage, output_tokens: 1 } },
      },
    ],
  ];
  const blocks =
    'text' in reply
      ? [{ type: 'text', text: '' }]
      : reply.calls.map((c, i) => ({ type: 'tool_use', id: `toolu_${i}`, name: c.name, input: {} }));
  blocks.forEach((b, index) => {
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: b }]);
    const delta =
      'text' in reply
        ? { type: 'text_delta', text: reply.text }
        : { type: 'input_json_delta', partial_json: JSON.stringify(reply.calls[index]!.input) };
    events.push(
      ['content_block_delta', { type: 'content_block_delta', index, delta }],
      ['content_block_stop', { type: 'content_block_stop', index }],
    );
  });
  const stop = 'text' in reply ? 'end_turn' : 'tool_use';
  events.push(
    ['message_delta', { type: 'message_delta', delta: { stop_reason: stop }, usage: { output_tokens: output } }],
    ['message_stop', { type: 'message_stop' }],
  );
  return sse(events);
}

function openAiStream(reply: StandInReply, usage: Json): string {
  const chunk = (delta: Json, finish: string | null) =>
    [undefined, { choices: [{ index: 0, delta, finish_reason: finish }] }] as [undefined, unknown];
  const events: Array<[undefined, unknown]> = [];
  if ('text' in reply) events.push(chunk({ role: 'assistant', content: reply.text }, null), chunk({}, 'stop'));
  else {
    const tool_calls = reply.calls.map((c, index) => ({
      index,
      id: `call_${index}`,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.input) },
    }));
    events.push(chunk({ role: 'assistant', tool_calls }, null), chunk({}, 'tool_calls'));
  }
  events.push([undefined, { choices: [], usage }], [undefined, '[DONE]']);
  return sse(events);
}

/** A running stand-in: its base URL, what it counted per request, and how to stop it. */
export interface StandIn {
  url: string;
  counted: CountedRequest[];
  close(): Promise<void>;
}

/** Starts a stand-in for `format` on a loopback port; `answer` scripts each reply from the request body. */
export async function startStandIn(format: 'anthropic' | 'openai', answer: (body: Body) => StandInReply): Promise<StandIn> {
  const count = format === 'anthropic' ? anthropicCounter() : openAiCounter();
  const counted: CountedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
      const n = count(body);
      counted.push(n);
      const reply = answer(body);
      const output = countTokens('text' in reply ? reply.text : JSON.stringify(reply.calls), format);
      const written = n.written;
      const text =
        format === 'anthropic'
          ? anthropicStream(
              reply,
              { input_tokens: n.input - n.cached - written, cache_read_input_tokens: n.cached, cache_creation_input_tokens: written },
              output,
            )
          : openAiStream(reply, { prompt_tokens: n.input, completion_tokens: output, prompt_tokens_details: { cached_tokens: n.cached } });
      res.writeHead(200, { 'content-type': 'text/event-stream' }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, counted, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
