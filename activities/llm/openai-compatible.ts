/**
 * An OpenAI-compatible chat-completions provider (OpenAI, Ollama's `/v1`, vLLM, LM Studio…):
 * POST {baseUrl}/chat/completions with `stream: true`, parsed by our own SSE parser over plain
 * `fetch`. Also home of the helpers both wire formats share (tool names, tool result text).
 */
import { createHash } from 'node:crypto';
import type { LlmStepRequest, LlmStepResult, ToolSpec } from '../../core/llm.js';
import type { ContentPart } from '../../core/message.js';
import type { TokenUsage } from '../../core/spend.js';
import type { ToolCall, ToolResult } from '../../core/tools.js';
import type { LlmProvider } from './llm-provider.js';
import { eventJson, malformedResponse, postSse, providerError, truncatedStream } from './llm-errors.js';

/** Options of `createOpenAiCompatibleProvider`. */
export interface OpenAiCompatibleOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1` (no trailing `/chat/completions`). */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  fetch?: typeof fetch;
  /** Extra request headers (e.g. `OpenAI-Organization`). */
  headers?: Record<string, string>;
  /** Provider name for logs and errors (default `openai`). */
  name?: string;
  /** An optional system message put first. */
  system?: string;
  /** Abort a stream silent for this long (default 120 s). */
  idleTimeoutMs?: number;
}

// ---- shared by both wire formats ------------------------------------------------------------

const WIRE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The model-facing name of a tool id: dots become `__` (`fs.read` → `fs__read`), as both APIs
 * want `^[a-zA-Z0-9_-]{1,64}$`. An id that still does not fit gets a sanitized name plus a hash.
 */
export function wireToolName(id: string): string {
  const simple = id.replace(/\./g, '__');
  if (WIRE_NAME.test(simple)) return simple;
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 8);
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 55)}_${hash}`;
}

/** Maps wire names back to tool ids for one request: the request's tools first, then `__` → `.`. */
export function toolNameMap(tools: readonly ToolSpec[]): (wire: string) => string {
  const table = new Map(tools.map((t) => [wireToolName(t.id), t.id]));
  return (wire) => table.get(wire) ?? wire.replace(/__/g, '.');
}

/** What the model is told about a tool result: the outcome as JSON (status, output or error). */
export function toolResultText(r: ToolResult): string {
  return JSON.stringify(r.outcome);
}

/** True unless the tool completed. */
export function toolResultIsError(r: ToolResult): boolean {
  return r.outcome.status !== 'Completed';
}

/** Call ids must be unique within a turn: keep the provider's, fill in missing or repeated ones. */
export function uniqueCallIds(calls: ToolCall[], step: number): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((c, i) => {
    let id = c.callId;
    if (!id || seen.has(id)) id = `call_s${step}_${i}`;
    seen.add(id);
    return { ...c, callId: id };
  });
}

/** Parses accumulated tool arguments; empty means `{}`. */
export function parseToolArguments(provider: string, tool: string, json: string): unknown {
  if (json.trim() === '') return {};
  try {
    return JSON.parse(json);
  } catch {
    throw malformedResponse(provider, `the arguments of the ${tool} tool call are not valid JSON (${json.length} characters received)`);
  }
}

export function dataUrl(mime: string, base64: string): string {
  return `data:${mime};base64,${base64}`;
}

// ---- OpenAI chat completions ----------------------------------------------------------------

type OpenAiContent = string | Array<Record<string, unknown>>;
type OpenAiMessage = Record<string, unknown> & { role: 'system' | 'user' | 'assistant' | 'tool' };

function userContent(parts: readonly ContentPart[]): OpenAiContent {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n');
  return parts.map((p) => {
    switch (p.type) {
      case 'text':
        return { type: 'text', text: p.text };
      case 'image':
        return { type: 'image_url', image_url: { url: dataUrl(p.mime, p.data) } };
      case 'document':
        return { type: 'file', file: { filename: p.filename ?? 'document.pdf', file_data: dataUrl(p.mime, p.data) } };
    }
  });
}

/** The message with the turn's volatile context after it: the next turn's history (the message alone) shares its prefix. */
function withContext(content: OpenAiContent, context: string | undefined): OpenAiContent {
  if (!context) return content;
  return typeof content === 'string' ? `${content}\n\n${context}` : [...content, { type: 'text', text: context }];
}

/** The request body for one step (exported for tests and debugging). */
export function openAiRequestBody(req: LlmStepRequest, model: string, system?: string): Record<string, unknown> {
  const messages: OpenAiMessage[] = [];
  // System prompt and tools first, then history: servers cache a byte-identical prefix (docs/LLM-PROVIDERS.md).
  const prompt = req.system ?? system;
  if (prompt) messages.push({ role: 'system', content: prompt });
  for (const h of req.history) messages.push({ role: h.role, content: h.text });
  messages.push({ role: 'user', content: withContext(userContent(req.message.content), req.context) });
  for (const item of req.transcript) {
    if (item.role === 'assistant') {
      messages.push({
        role: 'assistant',
        content: item.text ?? null,
        tool_calls: item.calls.map((c) => ({
          id: c.callId,
          type: 'function',
          function: { name: wireToolName(c.tool), arguments: JSON.stringify(c.input ?? {}) },
        })),
      });
    } else {
      for (const r of item.results) messages.push({ role: 'tool', tool_call_id: r.callId, content: toolResultText(r) });
    }
  }
  const body: Record<string, unknown> = { model, messages, stream: true, stream_options: { include_usage: true } };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: wireToolName(t.id), description: t.description, parameters: t.inputSchema },
    }));
  }
  return body;
}

interface PartialCall {
  id: string;
  name: string;
  args: string;
}

/** A provider over an OpenAI-compatible `/chat/completions` endpoint. */
export function createOpenAiCompatibleProvider(opts: OpenAiCompatibleOptions): LlmProvider {
  const name = opts.name ?? 'openai';
  const fetchImpl = opts.fetch ?? globalThis.fetch;
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    name,
    model: opts.model,
    async step(req, sink): Promise<LlmStepResult> {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
      const toId = toolNameMap(req.tools);
      let text = '';
      const calls = new Map<number, PartialCall>();
      let finished = false;
      let usage: TokenUsage | undefined;
      for await (const ev of postSse({
        provider: name,
        url,
        headers,
        body: openAiRequestBody(req, opts.model, opts.system),
        fetch: fetchImpl,
        sink,
        apiKey: opts.apiKey,
        ...(opts.idleTimeoutMs === undefined ? {} : { idleTimeoutMs: opts.idleTimeoutMs }),
      })) {
        if (ev.data.trim() === '[DONE]') {
          finished = true;
          break;
        }
        const chunk = eventJson(name, ev);
        if (chunk.error !== undefined) throw providerError({ provider: name, status: null, body: chunk, apiKey: opts.apiKey });
        // With stream_options.include_usage the last chunk before [DONE] carries the step's usage (and no choices).
        usage = openAiUsage(chunk.usage) ?? usage;
        const choices = Array.isArray(chunk.choices) ? (chunk.choices as Array<Record<string, unknown>>) : [];
        for (const choice of choices) {
          if (typeof choice.index === 'number' && choice.index !== 0) continue;
          const delta = (choice.delta ?? {}) as Record<string, unknown>;
          if (typeof delta.content === 'string' && delta.content !== '') {
            text += delta.content;
            sink.text(delta.content);
          }
          if (Array.isArray(delta.tool_calls)) {
            for (const [pos, raw] of (delta.tool_calls as Array<Record<string, unknown>>).entries()) {
              const index = typeof raw.index === 'number' ? raw.index : pos;
              const fn = (raw.function ?? {}) as Record<string, unknown>;
              const call = calls.get(index) ?? { id: '', name: '', args: '' };
              if (typeof raw.id === 'string' && raw.id) call.id = raw.id;
              // The name arrives once, in the first fragment; tolerate servers that repeat it.
              if (typeof fn.name === 'string' && fn.name !== call.name) call.name += fn.name;
              if (typeof fn.arguments === 'string') call.args += fn.arguments;
              calls.set(index, call);
            }
          }
          if (typeof choice.finish_reason === 'string' && choice.finish_reason) finished = true;
        }
      }
      if (!finished) throw truncatedStream(name, 'the stream ended before the model finished its answer');
      const spent = usage ? { usage } : {};
      if (calls.size === 0) return { type: 'final', text, ...spent };
      const assembled: ToolCall[] = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, c]) => {
          if (!c.name) throw malformedResponse(name, 'a tool call without a function name');
          const tool = toId(c.name);
          return { callId: c.id, tool, input: parseToolArguments(name, tool, c.args) };
        });
      const result: LlmStepResult = { type: 'tool_calls', calls: uniqueCallIds(assembled, req.step), ...spent };
      if (text) result.text = text;
      return result;
    },
  };
}

/** A whole count of tokens from a provider's usage object, or undefined when absent or not a count. */
export function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** The chat-completions `usage` object (`prompt_tokens`, `completion_tokens`) as our usage; undefined without one. */
function openAiUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const u = raw as Record<string, unknown>;
  const inputTokens = tokenCount(u.prompt_tokens);
  const outputTokens = tokenCount(u.completion_tokens);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  // Automatic prefix caching reports its hits here (OpenAI; other servers may leave it out).
  const details = (typeof u.prompt_tokens_details === 'object' && u.prompt_tokens_details) || {};
  const cached = tokenCount((details as Record<string, unknown>).cached_tokens);
  return { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0, ...(cached ? { cachedInputTokens: cached } : {}) };
}
