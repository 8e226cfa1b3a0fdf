/**
 * The Anthropic Messages API provider: POST {baseUrl}/v1/messages with `stream: true`, parsed by
 * the same SSE parser and streaming request as the OpenAI-compatible provider.
 */
import type { LlmStepRequest, LlmStepResult } from '../../core/llm.js';
import type { ContentPart } from '../../core/message.js';
import type { TokenUsage } from '../../core/spend.js';
import { TOOLS_LOAD } from '../../core/tools/tools-load.js';
import { AivyxError } from '../../core/errors.js';
import type { ToolCall } from '../../core/tools.js';
import type { LlmProvider } from './llm-provider.js';
import { eventJson, malformedResponse, postSse, providerError, truncatedStream } from './llm-errors.js';
import {
  parseToolArguments,
  tokenCount,
  toolNameMap,
  toolResultIsError,
  toolResultText,
  uniqueCallIds,
  wireToolName,
} from './openai-compatible.js';

/** The API version header value this provider speaks. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Options of `createAnthropicProvider`. */
export interface AnthropicOptions {
  baseUrl?: string;
  model: string;
  apiKey: string;
  /** `max_tokens` of each step (default 4096). */
  maxTokens?: number;
  fetch?: typeof fetch;
  /** An optional top-level `system` prompt. */
  system?: string;
  /** Abort a stream silent for this long (default 120 s). */
  idleTimeoutMs?: number;
  /** Mark the stable prefix for the prompt cache (default true). */
  promptCache?: boolean;
}

type Block = Record<string, unknown>;
interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

function contentBlock(p: ContentPart): Block {
  switch (p.type) {
    case 'text':
      return { type: 'text', text: p.text };
    case 'image':
      return { type: 'image', source: { type: 'base64', media_type: p.mime, data: p.data } };
    case 'document':
      if (p.mime.startsWith('text/'))
        return {
          type: 'document',
          source: { type: 'text', media_type: 'text/plain', data: Buffer.from(p.data, 'base64').toString('utf8') },
        };
      if (p.mime !== 'application/pdf') {
        throw new AivyxError(
          'Llm',
          `anthropic accepts PDF and plain-text documents, not ${p.mime}${p.filename ? ` (${p.filename})` : ''}`,
          { hint: 'convert the attachment to PDF', detail: { provider: 'anthropic', status: null, retryable: false } },
        );
      }
      return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: p.data } };
  }
}

/** Appends a message, merging it into the previous one of the same role (the API wants alternation). */
function push(messages: AnthropicMessage[], role: AnthropicMessage['role'], content: Block[]): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last && last.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

/** Marks the end of a prefix the API may cache (reads bill at a tenth of the input price; docs/LLM-PROVIDERS.md). */
const EPHEMERAL = Object.freeze({ type: 'ephemeral' });
/** The API refuses a request with more. */
const MAX_BREAKPOINTS = 4;

/**
 * The request body for one step (exported for tests and debugging). Order is tools, system,
 * history, the message, then the turn's transcript; with `promptCache` (the default) cache
 * breakpoints mark the end of the system prompt (tools and system), of the history, of the
 * message (the next turn's history starts with it) and of the transcript (the next step's).
 * The volatile `context` goes after the message's breakpoint, so it never breaks a cached prefix.
 * With deferred tools (core/tool-offer.ts), `tools.load` ends the tools that never change within a
 * session: it takes a breakpoint (the history's gives way, the message's is read back up to 20
 * blocks), so the step after a load still reads the core tools and the index from the cache.
 */
export function anthropicRequestBody(
  req: LlmStepRequest,
  model: string,
  maxTokens: number,
  system?: string,
  promptCache = true,
): Record<string, unknown> {
  const messages: AnthropicMessage[] = [];
  const marks: Block[] = [];
  const history = req.history.filter((h) => h.text !== '').map((h) => ({ role: h.role, block: { type: 'text', text: h.text } as Block }));
  for (const h of history) push(messages, h.role, [h.block]);
  if (history.length > 0) marks.push(history[history.length - 1]!.block);
  const said = req.message.content.filter((p) => p.type !== 'text' || p.text !== '').map(contentBlock);
  if (said.length > 0) marks.push(said[said.length - 1]!);
  push(messages, 'user', [...said, ...(req.context ? [{ type: 'text', text: req.context }] : [])]);
  for (const item of req.transcript) {
    if (item.role === 'assistant') {
      const blocks: Block[] = item.text ? [{ type: 'text', text: item.text }] : [];
      for (const c of item.calls) {
        const input = typeof c.input === 'object' && c.input !== null && !Array.isArray(c.input) ? c.input : {};
        blocks.push({ type: 'tool_use', id: c.callId, name: wireToolName(c.tool), input });
      }
      push(messages, 'assistant', blocks);
    } else {
      push(
        messages,
        'user',
        item.results.map((r) => ({
          type: 'tool_result',
          tool_use_id: r.callId,
          content: toolResultText(r),
          ...(toolResultIsError(r) ? { is_error: true } : {}),
        })),
      );
    }
  }
  const lastBlock = messages.at(-1)?.content.at(-1);
  if (req.transcript.length > 0 && lastBlock) marks.push(lastBlock);
  const body: Record<string, unknown> = { model, max_tokens: maxTokens, stream: true, messages };
  const prompt = req.system ?? system;
  if (prompt) body.system = promptCache ? [{ type: 'text', text: prompt, cache_control: EPHEMERAL }] : prompt;
  if (req.tools.length > 0) {
    const tools: Block[] = req.tools.map((t) => ({ name: wireToolName(t.id), description: t.description, input_schema: t.inputSchema }));
    if (!prompt && promptCache) tools[tools.length - 1]!.cache_control = EPHEMERAL;
    const index = req.tools.findIndex((t) => t.id === TOOLS_LOAD);
    if (promptCache && index >= 0) tools[index]!.cache_control = EPHEMERAL;
    body.tools = tools;
  }
  // At most four breakpoints per request: the system prompt's (or the last tool's), tools.load's, and the last of these.
  const used = (prompt ? 1 : 0) + ((body.tools as Block[] | undefined) ?? []).filter((t) => t.cache_control).length;
  if (promptCache) for (const b of marks.slice(-(MAX_BREAKPOINTS - used))) b.cache_control = EPHEMERAL;
  return body;
}

type OpenBlock = { kind: 'text' } | { kind: 'tool'; id: string; name: string; json: string; done: boolean } | { kind: 'other' };

/** A provider over the Anthropic Messages API. */
export function createAnthropicProvider(opts: AnthropicOptions): LlmProvider {
  const name = 'anthropic';
  const fetchImpl = opts.fetch ?? globalThis.fetch;
  const url = `${(opts.baseUrl ?? 'https://api.anthropic.com').replace(/\/+$/, '')}/v1/messages`;
  const maxTokens = opts.maxTokens ?? 4096;
  return {
    name,
    model: opts.model,
    async step(req, sink): Promise<LlmStepResult> {
      const headers = { 'x-api-key': opts.apiKey, 'anthropic-version': ANTHROPIC_VERSION };
      const toId = toolNameMap(req.tools);
      const blocks = new Map<number, OpenBlock>();
      let text = '';
      let stopped = false;
      let stopReason: string | undefined;
      // message_start reports the input (cache reads and writes are input too); message_delta the cumulative output.
      const usage: TokenUsage = { inputTokens: 0, outputTokens: 0 };
      let usageSeen = false;
      const addUsage = (raw: unknown): void => {
        if (typeof raw !== 'object' || raw === null) return;
        const u = raw as Record<string, unknown>;
        const input = [u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens].map(tokenCount);
        if (input.some((n) => n !== undefined)) usage.inputTokens = input.reduce<number>((a, n) => a + (n ?? 0), 0);
        const [, written, read] = input;
        if (read) usage.cachedInputTokens = read;
        if (written) usage.cacheWriteTokens = written;
        const output = tokenCount(u.output_tokens);
        if (output !== undefined) usage.outputTokens = output;
        usageSeen ||= input.some((n) => n !== undefined) || output !== undefined;
      };
      const stream = postSse({
        provider: name,
        url,
        headers,
        body: anthropicRequestBody(req, opts.model, maxTokens, opts.system, opts.promptCache ?? true),
        fetch: fetchImpl,
        sink,
        apiKey: opts.apiKey,
        ...(opts.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: opts.idleTimeoutMs }),
      });
      for await (const ev of stream) {
        const data = eventJson(name, ev);
        const type = typeof data.type === 'string' ? data.type : ev.event;
        const index = typeof data.index === 'number' ? data.index : -1;
        switch (type) {
          case 'message_start':
            addUsage(((data.message ?? {}) as Record<string, unknown>).usage);
            break;
          case 'ping':
            break;
          case 'content_block_start': {
            const cb = (data.content_block ?? {}) as Record<string, unknown>;
            if (cb.type === 'text') {
              blocks.set(index, { kind: 'text' });
              if (typeof cb.text === 'string' && cb.text) {
                text += cb.text;
                sink.text(cb.text);
              }
            } else if (cb.type === 'tool_use') {
              if (typeof cb.name !== 'string' || !cb.name) throw malformedResponse(name, 'a tool_use block without a name');
              // `input` is `{}` at the start of a streamed block; the JSON arrives as input_json_delta.
              const initial = cb.input && typeof cb.input === 'object' && Object.keys(cb.input).length > 0 ? JSON.stringify(cb.input) : '';
              blocks.set(index, { kind: 'tool', id: typeof cb.id === 'string' ? cb.id : '', name: cb.name, json: initial, done: false });
            } else blocks.set(index, { kind: 'other' }); // thinking, server tools: not ours to act on
            break;
          }
          case 'content_block_delta': {
            const delta = (data.delta ?? {}) as Record<string, unknown>;
            const block = blocks.get(index);
            if (delta.type === 'text_delta' && typeof delta.text === 'string') {
              if (block?.kind !== 'text') throw malformedResponse(name, `a text delta for block ${index}, which is not a text block`);
              if (delta.text) {
                text += delta.text;
                sink.text(delta.text);
              }
            } else if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
              if (block?.kind !== 'tool')
                throw malformedResponse(name, `an input_json_delta for block ${index}, which is not a tool_use block`);
              block.json += delta.partial_json;
            }
            break;
          }
          case 'content_block_stop': {
            const block = blocks.get(index);
            if (block?.kind === 'tool') block.done = true;
            break;
          }
          case 'message_delta': {
            const delta = (data.delta ?? {}) as Record<string, unknown>;
            if (typeof delta.stop_reason === 'string') stopReason = delta.stop_reason;
            addUsage(data.usage);
            break;
          }
          case 'message_stop':
            stopped = true;
            break;
          case 'error':
            throw providerError({ provider: name, status: null, body: data, apiKey: opts.apiKey });
          default:
            break; // new event types are ignored, as the API documentation asks
        }
        if (stopped) break;
      }
      if (!stopped) throw truncatedStream(name, 'the stream ended before message_stop');
      const tools = [...blocks.entries()]
        .filter((e): e is [number, Extract<OpenBlock, { kind: 'tool' }>] => e[1].kind === 'tool')
        .sort(([a], [b]) => a - b);
      const spent = usageSeen ? { usage } : {};
      if (tools.length === 0) return { type: 'final', text, ...spent };
      const calls: ToolCall[] = tools.map(([, b]) => {
        const tool = toId(b.name);
        if (!b.done && stopReason === 'max_tokens')
          throw malformedResponse(name, `the ${tool} tool call was cut off at max_tokens (${maxTokens})`);
        return { callId: b.id, tool, input: parseToolArguments(name, tool, b.json) };
      });
      const result: LlmStepResult = { type: 'tool_calls', calls: uniqueCallIds(calls, req.step), ...spent };
      if (text) result.text = text;
      return result;
    },
  };
}
