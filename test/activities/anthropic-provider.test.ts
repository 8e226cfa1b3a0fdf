/**
 * The Anthropic Messages provider against a local HTTP server replaying recorded message streams
 * (test/fixtures/llm): request mapping, streamed text, tool_use assembly, errors, abort.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { aivyxFailure } from '../support/aivyx-failure.js';
import { closeReplayServers, fixture, replay, sink, type Reply } from '../support/llm-replay.js';
import { toApplicationFailure } from '../../activities/failure.js';
import { ANTHROPIC_VERSION, createAnthropicProvider } from '../../activities/llm/anthropic.js';
import type { LlmStepRequest } from '../../core/llm.js';

afterEach(closeReplayServers);
const replayAt = (replies: Parameters<typeof replay>[0]) => replay(replies, '');
const KEY = 'sk-ant-api03-SECRETSECRETSECRET-AAAA';

const tools = [
  {
    id: 'fs.read',
    description: 'Read a file',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
  { id: 'shell.exec', description: 'Run a command', inputSchema: { type: 'object' } },
];

function req(over: Partial<LlmStepRequest> = {}): LlmStepRequest {
  return {
    turnId: 't1',
    step: 0,
    history: [],
    message: { id: 'm1', sessionId: 's1', content: [{ type: 'text', text: 'read both' }], receivedAt: 0 },
    transcript: [],
    tools,
    ...over,
  };
}

const provider = (url: string, extra: Partial<Parameters<typeof createAnthropicProvider>[0]> = {}) =>
  createAnthropicProvider({ baseUrl: url, model: 'claude-sonnet-4-5', apiKey: KEY, ...extra });

describe('Anthropic provider: request mapping', () => {
  it('POSTs /v1/messages with the version header, image and document blocks, tool_use/tool_result turns and mapped tool names', async () => {
    const srv = await replayAt([{ body: fixture('anthropic-text.sse') }]);
    // The cache breakpoints this mapping adds by default are test/activities/prompt-cache.test.ts's subject.
    await provider(srv.url, { maxTokens: 1000, system: 'You are aivyx.', promptCache: false }).step(
      req({
        history: [
          { role: 'user', text: 'earlier question' },
          { role: 'assistant', text: 'earlier answer' },
        ],
        message: {
          id: 'm1',
          sessionId: 's1',
          receivedAt: 0,
          content: [
            { type: 'text', text: 'what is in these?' },
            { type: 'image', mime: 'image/jpeg', data: '/9j/4AAQ' },
            { type: 'document', mime: 'application/pdf', data: 'JVBERi0xLjQ=', filename: 'report.pdf' },
          ],
        },
        transcript: [
          {
            role: 'assistant',
            text: 'Reading.',
            calls: [
              { callId: 'toolu_1', tool: 'fs.read', input: { path: '/a' } },
              { callId: 'toolu_2', tool: 'shell.exec', input: { argv: ['ls'] } },
            ],
          },
          {
            role: 'tool',
            results: [
              { callId: 'toolu_1', tool: 'fs.read', outcome: { status: 'Completed', output: { content: 'A' }, verified: 'Verified' } },
              { callId: 'toolu_2', tool: 'shell.exec', outcome: { status: 'Denied', scope: 'shell.exec:ls', held: [] } },
            ],
          },
        ],
      }),
      sink(),
    );
    const [seen] = srv.seen;
    expect(seen?.path).toBe('/v1/messages');
    expect(seen?.headers['x-api-key']).toBe(KEY);
    expect(seen?.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(ANTHROPIC_VERSION).toBe('2023-06-01');
    expect(seen?.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      stream: true,
      system: 'You are aivyx.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'earlier question' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'earlier answer' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in these?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQ=' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 'toolu_1', name: 'fs__read', input: { path: '/a' } },
            { type: 'tool_use', id: 'toolu_2', name: 'shell__exec', input: { argv: ['ls'] } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: JSON.stringify({ status: 'Completed', output: { content: 'A' }, verified: 'Verified' }),
            },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: JSON.stringify({ status: 'Denied', scope: 'shell.exec:ls', held: [] }),
              is_error: true,
            },
          ],
        },
      ],
      tools: [
        { name: 'fs__read', description: 'Read a file', input_schema: tools[0]?.inputSchema },
        { name: 'shell__exec', description: 'Run a command', input_schema: { type: 'object' } },
      ],
    });
  });

  it('defaults max_tokens to 4096, omits system and tools when there are none, and merges same-role neighbours', async () => {
    const srv = await replayAt([{ body: fixture('anthropic-text.sse') }]);
    await provider(srv.url, { promptCache: false }).step(req({ tools: [], history: [{ role: 'user', text: 'unanswered' }] }), sink());
    const body = srv.seen[0]?.body;
    expect(body?.max_tokens).toBe(4096);
    expect(body).not.toHaveProperty('system');
    expect(body).not.toHaveProperty('tools');
    expect(body?.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'unanswered' },
          { type: 'text', text: 'read both' },
        ],
      },
    ]);
  });

  it('refuses a document type Anthropic cannot read, before sending anything', async () => {
    const srv = await replayAt([{ body: fixture('anthropic-text.sse') }]);
    const e = await aivyxFailure(
      provider(srv.url).step(
        req({
          message: { id: 'm', sessionId: 's', receivedAt: 0, content: [{ type: 'document', mime: 'application/msword', data: 'AA==' }] },
        }),
        sink(),
      ),
    );
    expect(e.kind).toBe('Llm');
    expect(e.detail).toMatchObject({ retryable: false });
    expect(srv.seen).toHaveLength(0);
  });
});

describe('Anthropic provider: streaming', () => {
  it('streams text deltas to the sink in order (ping ignored) and returns the final text', async () => {
    const srv = await replayAt([{ body: fixture('anthropic-text.sse'), chunk: 4 }]);
    const s = sink();
    const result = await provider(srv.url).step(req(), s);
    expect(s.chunks).toEqual(['Both', ' files', ' say hello', ' – ünïcödé ✓.']);
    // The usage the provider reported (the last chunk's, or message_start's input and message_delta's output).
    expect(result).toEqual({ type: 'final', text: 'Both files say hello – ünïcödé ✓.', usage: { inputTokens: 472, outputTokens: 12 } });
    expect(s.beats).toBeGreaterThan(10);
  });

  it('assembles two tool_use blocks from input_json_delta fragments, with the text before them', async () => {
    const srv = await replayAt([{ body: fixture('anthropic-tool-use.sse'), chunk: 3 }]);
    const s = sink();
    const result = await provider(srv.url).step(req(), s);
    expect(result).toEqual({
      type: 'tool_calls',
      usage: { inputTokens: 472, outputTokens: 89 },
      text: "I'll read both files.",
      calls: [
        { callId: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', tool: 'fs.read', input: { path: '/tmp/work/a.txt' } },
        { callId: 'toolu_01CJbE5Qh2hKd7Gm8Yk4Nw9P', tool: 'fs.read', input: { path: '/tmp/work/b.txt' } },
      ],
    });
    expect(s.chunks.join('')).toBe("I'll read both files.");
  });

  it('malformed input JSON is a non-retryable Llm error', async () => {
    const srv = await replayAt([{ body: fixture('anthropic-tool-use.sse').replace('"partial_json":"xt\\"}"', '"partial_json":"xt"') }]);
    const e = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(e.message).toMatch(/arguments of the fs\.read tool call are not valid JSON/);
    expect(e.detail).toMatchObject({ provider: 'anthropic', retryable: false });
  });

  it('an overloaded_error event mid-stream is a retryable Llm error', async () => {
    const srv = await replayAt([{ body: fixture('anthropic-overloaded-midstream.sse') }]);
    const s = sink();
    const e = await aivyxFailure(provider(srv.url).step(req(), s));
    expect(e.kind).toBe('Llm');
    expect(e.message).toMatch(/overloaded/);
    expect(e.detail).toMatchObject({ provider: 'anthropic', status: null, retryable: true, errorType: 'overloaded_error' });
    expect(s.chunks).toEqual(['Let me']);
    expect(toApplicationFailure(e).nonRetryable).toBe(false);
  });

  it('a stream without message_stop is a retryable Llm error', async () => {
    const text = fixture('anthropic-text.sse');
    const srv = await replayAt([{ body: text.slice(0, text.indexOf('event: message_stop')) }]);
    const e = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(e.detail).toMatchObject({ retryable: true });
    expect(e.message).toMatch(/message_stop/);
  });
});

describe('Anthropic provider: errors', () => {
  const errorReply = (status: number, file: string, headers: Record<string, string> = {}): Reply => ({
    status,
    headers,
    body: fixture(file),
  });

  it('401 → Config naming the API key setting, never the key', async () => {
    const srv = await replayAt([errorReply(401, 'anthropic-401.json')]);
    const e = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(e.kind).toBe('Config');
    expect(e.hint).toMatch(/AIVYX_LLM_API_KEY/);
    expect(e.detail).toMatchObject({ provider: 'anthropic', status: 401, retryable: false, errorType: 'authentication_error' });
    expect(JSON.stringify(e.toData())).not.toMatch(/SECRETSECRET|read both/);
  });

  it('403 → Config too', async () => {
    const srv = await replayAt([
      {
        status: 403,
        body: '{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}',
      },
    ]);
    expect((await aivyxFailure(provider(srv.url).step(req(), sink()))).kind).toBe('Config');
  });

  it('429 → retryable Llm with retryAfterMs from retry-after; nextRetryDelay on the failure', async () => {
    const srv = await replayAt([errorReply(429, 'anthropic-429.json', { 'retry-after': '7' })]);
    const e = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(e.detail).toMatchObject({
      provider: 'anthropic',
      status: 429,
      retryable: true,
      retryAfterMs: 7000,
      errorType: 'rate_limit_error',
    });
    expect(toApplicationFailure(e).nextRetryDelay).toBe(7000);
  });

  it('529 overloaded → retryable Llm, honouring retry-after when sent', async () => {
    const srv = await replayAt([errorReply(529, 'anthropic-529.json'), errorReply(529, 'anthropic-529.json', { 'retry-after': '2' })]);
    const first = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(first.kind).toBe('Llm');
    expect(first.message).toMatch(/overloaded/);
    expect(first.detail).toMatchObject({ status: 529, retryable: true });
    expect(first.detail).not.toHaveProperty('retryAfterMs');
    expect((await aivyxFailure(provider(srv.url).step(req(), sink()))).detail).toMatchObject({ retryAfterMs: 2000 });
  });

  it('500 → retryable Llm', async () => {
    const srv = await replayAt([errorReply(500, 'anthropic-500.json')]);
    const e = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(e.detail).toMatchObject({ status: 500, retryable: true, errorType: 'api_error' });
  });

  it('400 "prompt is too long" → non-retryable Llm saying so, with a hint to shorten history', async () => {
    const srv = await replayAt([errorReply(400, 'anthropic-400-context.json')]);
    const e = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(e.kind).toBe('Llm');
    expect(e.message).toMatch(/too long for the model's context window.*prompt is too long/);
    expect(e.hint).toMatch(/shorten the history/);
    expect(e.detail).toMatchObject({ status: 400, retryable: false, contextOverflow: true });
    expect(toApplicationFailure(e).nonRetryable).toBe(true);
  });

  it('another 400 → non-retryable Llm', async () => {
    const srv = await replayAt([
      { status: 400, body: '{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}' },
    ]);
    const e = await aivyxFailure(provider(srv.url).step(req(), sink()));
    expect(e.detail).toMatchObject({ status: 400, retryable: false });
    expect(e.detail).not.toHaveProperty('contextOverflow');
  });
});

describe('Anthropic provider: abort', () => {
  it('abort while the stream is silent stops promptly with the abort reason and closes the connection', async () => {
    const text = fixture('anthropic-text.sse');
    const srv = await replayAt([{ body: text, hangAfter: text.indexOf('\n\n', text.indexOf('" files"')) + 2 }]);
    const ctrl = new AbortController();
    const s = sink(ctrl.signal);
    const reason = new Error('step cancelled');
    const p = provider(srv.url).step(req(), {
      ...s,
      text: (c) => {
        s.chunks.push(c);
        if (c === ' files') setTimeout(() => ctrl.abort(reason), 50);
      },
    });
    const settled = await Promise.race([
      p.then(
        () => 'resolved',
        (e: unknown) => e,
      ),
      new Promise((done) => setTimeout(() => done('still running'), 3_000)),
    ]);
    expect(settled).toBe(reason);
    expect(s.chunks).toEqual(['Both', ' files']);
    await Promise.all(srv.closed);
  });
});
