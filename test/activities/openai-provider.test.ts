/**
 * The OpenAI-compatible provider against a local HTTP server replaying recorded chat-completions
 * streams (test/fixtures/llm): request mapping, streamed text, tool-call assembly, errors, abort.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { aivyxFailure } from '../support/aivyx-failure.js';
import { closeReplayServers, fixture, replay, sink, type Reply } from '../support/llm-replay.js';
import { toApplicationFailure } from '../../activities/failure.js';
import { createOpenAiCompatibleProvider, wireToolName } from '../../activities/llm/openai-compatible.js';
import { detectOllama, providerFromSpec } from '../../activities/llm/provider-from-config.js';
import type { LlmStepRequest } from '../../core/llm.js';

afterEach(closeReplayServers);
const replayAt = (replies: Parameters<typeof replay>[0]) => replay(replies, '/v1');

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

describe('OpenAI-compatible provider: request mapping', () => {
  it('POSTs a streaming chat completion with history, image and document parts, the transcript and mapped tool names', async () => {
    const srv = await replayAt([{ body: fixture('openai-text.sse') }]);
    const llm = createOpenAiCompatibleProvider({
      baseUrl: `${srv.url}/`,
      model: 'gpt-4o-mini',
      apiKey: 'sk-test-123456789',
      headers: { 'openai-organization': 'org-1' },
    });
    await llm.step(
      req({
        step: 1,
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
            { type: 'image', mime: 'image/png', data: 'iVBORw0KGgo=' },
            { type: 'document', mime: 'application/pdf', data: 'JVBERi0xLjQ=', filename: 'report.pdf' },
          ],
        },
        transcript: [
          { role: 'assistant', text: 'Reading.', calls: [{ callId: 'call_1', tool: 'fs.read', input: { path: '/a' } }] },
          {
            role: 'tool',
            results: [
              { callId: 'call_1', tool: 'fs.read', outcome: { status: 'Completed', output: { content: 'A' }, verified: 'Verified' } },
            ],
          },
        ],
      }),
      sink(),
    );
    const [seen] = srv.seen;
    expect(seen?.method).toBe('POST');
    expect(seen?.path).toBe('/v1/chat/completions');
    expect(seen?.headers.authorization).toBe('Bearer sk-test-123456789');
    expect(seen?.headers['openai-organization']).toBe('org-1');
    expect(seen?.headers['content-type']).toBe('application/json');
    expect(seen?.body).toEqual({
      model: 'gpt-4o-mini',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'user', content: 'earlier question' },
        { role: 'assistant', content: 'earlier answer' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in these?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0xLjQ=' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Reading.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'fs__read', arguments: '{"path":"/a"}' } }],
        },
        {
          role: 'tool',
          tool_call_id: 'call_1',
          content: JSON.stringify({ status: 'Completed', output: { content: 'A' }, verified: 'Verified' }),
        },
      ],
      tools: [
        { type: 'function', function: { name: 'fs__read', description: 'Read a file', parameters: tools[0]?.inputSchema } },
        { type: 'function', function: { name: 'shell__exec', description: 'Run a command', parameters: { type: 'object' } } },
      ],
    });
  });

  it('sends a text-only message as a plain string, no tools field without tools, and no Authorization without a key', async () => {
    const srv = await replayAt([{ body: fixture('openai-text.sse') }]);
    await createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'llama3.1' }).step(req({ tools: [] }), sink());
    expect(srv.seen[0]?.body.messages).toEqual([{ role: 'user', content: 'read both' }]);
    expect(srv.seen[0]?.body).not.toHaveProperty('tools');
    expect(srv.seen[0]?.headers).not.toHaveProperty('authorization');
  });

  it('maps tool ids to API-legal names reversibly', () => {
    expect(wireToolName('fs.read')).toBe('fs__read');
    expect(wireToolName('memory.search_all')).toBe('memory__search_all');
    const odd = wireToolName('weird tool/with spaces.and.a.very.long.name.that.goes.on.and.on.beyond.sixty.four');
    expect(odd).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });
});

describe('OpenAI-compatible provider: streaming', () => {
  it('streams text deltas to the sink in order and returns the final text, heartbeating per chunk', async () => {
    const srv = await replayAt([{ body: fixture('openai-text.sse'), chunk: 5 }]);
    const s = sink();
    const result = await createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), s);
    expect(s.chunks).toEqual(['Both', ' files', ' say', ' hello', ' – ünïcödé ✓.']);
    // The usage the provider reported (the last chunk's, or message_start's input and message_delta's output).
    expect(result).toEqual({ type: 'final', text: 'Both files say hello – ünïcödé ✓.', usage: { inputTokens: 412, outputTokens: 9 } });
    expect(s.beats).toBeGreaterThan(10);
  });

  it('assembles two parallel tool calls from fragments by index and maps the names back', async () => {
    const srv = await replayAt([{ body: fixture('openai-tool-calls.sse'), chunk: 3 }]);
    const result = await createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink());
    expect(result).toEqual({
      type: 'tool_calls',
      usage: { inputTokens: 380, outputTokens: 52 },
      calls: [
        { callId: 'call_Xq3bV8tZk1mN2pR4sT6uW8yA', tool: 'fs.read', input: { path: '/tmp/work/a.txt' } },
        { callId: 'call_Lm9nB7vC5xZ3aS1dF2gH4jK6', tool: 'fs.read', input: { path: '/tmp/work/b.txt' } },
      ],
    });
  });

  it('fills in missing call ids so they stay unique within the turn', async () => {
    const sse = fixture('openai-tool-calls.sse').replace(/"id":"call_[A-Za-z0-9]+",/g, '');
    const srv = await replayAt([{ body: sse }]);
    const result = await createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req({ step: 3 }), sink());
    expect(result.type === 'tool_calls' && result.calls.map((c) => c.callId)).toEqual(['call_s3_0', 'call_s3_1']);
  });

  it('malformed tool-call arguments are a non-retryable Llm error that says so', async () => {
    const srv = await replayAt([{ body: fixture('openai-tool-calls.sse').replace('.txt\\"}', '.txt\\"') }]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink()));
    expect(e.kind).toBe('Llm');
    expect(e.message).toMatch(/arguments of the fs\.read tool call are not valid JSON/);
    expect(e.detail).toMatchObject({ provider: 'openai', retryable: false });
    expect(toApplicationFailure(e).nonRetryable).toBe(true);
  });

  it('a stream that ends before finish_reason/[DONE] is a retryable Llm error', async () => {
    const text = fixture('openai-text.sse');
    const srv = await replayAt([{ body: text.slice(0, text.indexOf('"finish_reason":"stop"') - 200) }]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink()));
    expect(e.detail).toMatchObject({ retryable: true });
    expect(e.message).toMatch(/ended before/);
  });

  it('an error object inside the stream is mapped like an HTTP error', async () => {
    const srv = await replayAt([{ body: `data: ${fixture('openai-500.json').trim()}\n\n` }]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink()));
    expect(e.kind).toBe('Llm');
    expect(e.detail).toMatchObject({ retryable: true, errorType: 'server_error' });
  });
});

describe('OpenAI-compatible provider: errors', () => {
  const errorReply = (status: number, file: string, headers: Record<string, string> = {}): Reply => ({
    status,
    headers,
    body: fixture(file),
  });
  const KEY = 'sk-proj-abc1SECRETSECRETSECRETxyz9';

  it('401 → Config naming the API key setting, without the key or the provider text that echoes it', async () => {
    const srv = await replayAt([errorReply(401, 'openai-401.json')]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm', apiKey: KEY }).step(req(), sink()));
    expect(e.kind).toBe('Config');
    expect(e.hint).toMatch(/AIVYX_LLM_API_KEY/);
    expect(e.detail).toMatchObject({ provider: 'openai', status: 401, retryable: false });
    expect(JSON.stringify(e.toData())).not.toMatch(/sk-proj|SECRETSECRET|read both/);
    expect(toApplicationFailure(e)).toMatchObject({ type: 'Config', nonRetryable: true });
  });

  it('429 → retryable Llm with retryAfterMs from retry-after-ms, and the failure carries it as nextRetryDelay', async () => {
    const srv = await replayAt([errorReply(429, 'openai-429.json', { 'retry-after-ms': '1500', 'retry-after': '2' })]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm', apiKey: KEY }).step(req(), sink()));
    expect(e.kind).toBe('Llm');
    expect(e.detail).toMatchObject({ provider: 'openai', status: 429, retryable: true, retryAfterMs: 1500, code: 'rate_limit_exceeded' });
    const f = toApplicationFailure(e);
    expect(f.nonRetryable).toBe(false);
    expect(f.nextRetryDelay).toBe(1500);
  });

  it('429 retry-after in seconds and as an HTTP date', async () => {
    const srv = await replayAt([
      errorReply(429, 'openai-429.json', { 'retry-after': '3' }),
      errorReply(429, 'openai-429.json', { 'retry-after': new Date(Date.now() + 20_000).toUTCString() }),
    ]);
    const llm = createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' });
    expect((await aivyxFailure(llm.step(req(), sink()))).detail?.retryAfterMs).toBe(3000);
    const dated = (await aivyxFailure(llm.step(req(), sink()))).detail?.retryAfterMs as number;
    expect(dated).toBeGreaterThan(17_000);
    expect(dated).toBeLessThanOrEqual(20_000);
  });

  it('429 insufficient_quota is not retried', async () => {
    const srv = await replayAt([errorReply(429, 'openai-429-quota.json')]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink()));
    expect(e.detail).toMatchObject({ retryable: false });
    expect(e.hint).toMatch(/billing/);
  });

  it('500 → retryable Llm without a delay of its own', async () => {
    const srv = await replayAt([errorReply(500, 'openai-500.json')]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink()));
    expect(e.kind).toBe('Llm');
    expect(e.detail).toMatchObject({ status: 500, retryable: true });
    expect(e.detail).not.toHaveProperty('retryAfterMs');
    expect(toApplicationFailure(e).nextRetryDelay).toBeUndefined();
  });

  it('a provider message that echoes the key is redacted', async () => {
    const srv = await replayAt([
      {
        status: 502,
        body: JSON.stringify({ error: { message: `upstream rejected ${KEY} and sk-other-1234567890`, type: 'server_error' } }),
      },
    ]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm', apiKey: KEY }).step(req(), sink()));
    expect(e.detail).toMatchObject({ status: 502, retryable: true });
    expect(e.message).toContain('upstream rejected [redacted] and [redacted]');
    expect(e.message).not.toMatch(/SECRETSECRET|sk-other/);
  });

  it('400 context_length_exceeded → non-retryable Llm that says the context is too long and hints to shorten history', async () => {
    const srv = await replayAt([errorReply(400, 'openai-400-context.json')]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink()));
    expect(e.kind).toBe('Llm');
    expect(e.message).toMatch(/too long for the model's context window/);
    expect(e.hint).toMatch(/shorten the history/);
    expect(e.detail).toMatchObject({ status: 400, retryable: false, contextOverflow: true, code: 'context_length_exceeded' });
    expect(toApplicationFailure(e).nonRetryable).toBe(true);
  });

  it('a refused connection → retryable Llm naming only the origin', async () => {
    const srv = await replayAt([]);
    const url = srv.url;
    await closeReplayServers();
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: url, model: 'm', apiKey: KEY }).step(req(), sink()));
    expect(e.kind).toBe('Llm');
    expect(e.message).toMatch(/cannot reach openai at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
    expect(e.detail).toMatchObject({ retryable: true, status: null });
    expect(e.message).not.toContain(KEY);
  });
});

describe('OpenAI-compatible provider: abort and stalls', () => {
  it('abort mid-stream stops promptly, throws the abort reason and closes the connection', async () => {
    const text = fixture('openai-text.sse');
    // The server sends the first two text events and then holds the connection open.
    const srv = await replayAt([{ body: text, hangAfter: text.indexOf('\n\n', text.indexOf(' files')) + 2 }]);
    const ctrl = new AbortController();
    const s = sink(ctrl.signal);
    const reason = new Error('step cancelled');
    const started = Date.now();
    const p = createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), {
      ...s,
      text: (c) => {
        s.chunks.push(c);
        // Cancel while the provider waits on the silent connection.
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
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(s.chunks).toEqual(['Both', ' files']);
    await Promise.all(srv.closed);
  });

  it('an already aborted signal sends nothing', async () => {
    const srv = await replayAt([{ body: fixture('openai-text.sse') }]);
    const ctrl = new AbortController();
    ctrl.abort(new Error('gone'));
    await expect(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm' }).step(req(), sink(ctrl.signal))).rejects.toThrow('gone');
    expect(srv.seen).toHaveLength(0);
  });

  it('a stream silent for idleTimeoutMs fails retryably', async () => {
    const text = fixture('openai-text.sse');
    const srv = await replayAt([{ body: text, hangAfter: 300 }]);
    const e = await aivyxFailure(createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'm', idleTimeoutMs: 300 }).step(req(), sink()));
    expect(e.message).toMatch(/no data from the provider for 300 ms/);
    expect(e.detail).toMatchObject({ retryable: true });
  });
});

describe('providerFromSpec and detectOllama', () => {
  it('builds openai (key from env or a named secret), ollama and anthropic providers; refuses unknown specs listing the forms', async () => {
    const srv = await replayAt([{ body: fixture('openai-text.sse') }, { body: fixture('openai-text.sse') }]);
    const viaSecret = await providerFromSpec(
      'openai:gpt-4o-mini',
      { AIVYX_LLM_BASE_URL: srv.url, AIVYX_LLM_API_KEY_SECRET: 'openai-key', AIVYX_LLM_API_KEY: 'sk-env-ignored' },
      async (n) => (n === 'openai-key' ? 'sk-from-secret' : undefined),
    );
    expect(viaSecret.name).toBe('openai');
    await viaSecret.step(req(), sink());
    expect(srv.seen[0]?.headers.authorization).toBe('Bearer sk-from-secret');
    expect(srv.seen[0]?.body.model).toBe('gpt-4o-mini');
    const ollama = await providerFromSpec('ollama:llama3.1', { AIVYX_LLM_BASE_URL: srv.url });
    expect(ollama.name).toBe('ollama');
    await ollama.step(req(), sink());
    expect(srv.seen[1]?.headers).not.toHaveProperty('authorization');
    expect((await providerFromSpec('anthropic:claude-sonnet-4-5', { AIVYX_LLM_API_KEY: 'sk-ant-x' })).name).toBe('anthropic');

    const unknown = await aivyxFailure(providerFromSpec('gemini:pro', {}));
    expect(unknown.kind).toBe('Config');
    expect(unknown.hint).toMatch(/scripted:<file>, openai:<model>, ollama:<model>, anthropic:<model>/);
    expect((await aivyxFailure(providerFromSpec('openai:gpt-4o', {}))).hint).toMatch(/AIVYX_LLM_API_KEY/);
    expect((await aivyxFailure(providerFromSpec('anthropic:', { AIVYX_LLM_API_KEY: 'k' }))).message).toMatch(/needs a model name/);
    expect(
      (await aivyxFailure(providerFromSpec('openai:m', { AIVYX_LLM_API_KEY_SECRET: 'missing' }, async () => undefined))).message,
    ).toMatch(/secret "missing"/);
  });

  it('detectOllama: true when /api/tags answers, false when nothing listens or it is too slow', async () => {
    const up = createServer((r, res) => {
      if (r.url === '/api/tags') res.end('{"models":[]}');
      else if (r.url === '/slow/api/tags') setTimeout(() => res.end('{}'), 2_000);
      else res.writeHead(404).end();
    });
    await new Promise<void>((done) => up.listen(0, '127.0.0.1', done));
    const port = (up.address() as AddressInfo).port;
    try {
      expect(await detectOllama(fetch, `http://127.0.0.1:${port}/v1`)).toBe(true);
      const t = Date.now();
      expect(await detectOllama(fetch, `http://127.0.0.1:${port}/slow`)).toBe(false);
      expect(Date.now() - t).toBeLessThan(1_500);
      expect(await detectOllama(fetch, `http://127.0.0.1:${port}/nope`)).toBe(false);
    } finally {
      up.closeAllConnections();
      await new Promise((done) => up.close(done));
    }
    expect(await detectOllama(fetch, `http://127.0.0.1:${port}`)).toBe(false);
  });
});
