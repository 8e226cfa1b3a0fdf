/**
 * Whole turns through the real providers, against a local server replaying each provider's
 * recorded wire format (test/fixtures/llm): parallel tool calls, retry-after on 429/529, and a
 * non-retryable context overflow.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../activities/llm/anthropic.js';
import { createOpenAiCompatibleProvider } from '../../activities/llm/openai-compatible.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const fixtures = join(import.meta.dirname, '../fixtures/llm');
const dir = mkdtempSync(join(tmpdir(), 'aivyx-provider-turns-'));
writeFileSync(join(dir, 'a.txt'), 'hello from a');
writeFileSync(join(dir, 'b.txt'), 'hello from b');
const sse = (name: string) => readFileSync(join(fixtures, name), 'utf8').replaceAll('{{DIR}}', dir);
const json = (name: string) => readFileSync(join(fixtures, name), 'utf8');

interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

/** A replay server: answers each request with the next queued reply, streamed in small chunks. */
class ReplayServer {
  queue: Reply[] = [];
  seen: Array<{ at: number; body: Record<string, unknown> }> = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString('utf8')));
      req.on('end', () => {
        this.seen.push({ at: Date.now(), body: JSON.parse(raw) as Record<string, unknown> });
        const r = this.queue.shift() ?? { status: 500, body: '{"error":{"message":"no reply queued","type":"server_error"}}' };
        const status = r.status ?? 200;
        res.writeHead(status, { 'content-type': status === 200 ? 'text/event-stream' : 'application/json', ...r.headers });
        const bytes = Buffer.from(r.body, 'utf8');
        let i = 0;
        const pump = () => {
          if (i >= bytes.length) return void res.end();
          res.write(bytes.subarray(i, i + 64));
          i += 64;
          setImmediate(pump);
        };
        pump();
      });
    });
    await new Promise<void>((done) => this.server?.listen(0, '127.0.0.1', done));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  reset(queue: Reply[]): void {
    this.queue = queue;
    this.seen = [];
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((done) => this.server?.close(done));
  }
}

describe('OpenAI-compatible provider in a full turn', () => {
  const srv = new ReplayServer();
  let h: Harness;
  beforeAll(async () => {
    await srv.start();
    h = await startHarness({ llm: createOpenAiCompatibleProvider({ baseUrl: `${srv.url}/v1`, model: 'gpt-4o-mini', apiKey: 'sk-test' }) });
  });
  afterAll(async () => {
    await h?.stop();
    await srv.stop();
  });

  it("a full turn with each provider's replayed stream calls two tools in parallel and completes (OpenAI)", async () => {
    srv.reset([{ body: sse('openai-tool-calls.sse') }, { body: sse('openai-text.sse') }]);
    const { turnId, outcome, events } = await h.turn('read a.txt and b.txt');
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'Both files say hello – ünïcödé ✓.', toolCallsMade: 2 });
    expect(
      events
        .filter((e) => e.type === 'text')
        .map((e) => (e.type === 'text' ? e.text : ''))
        .join(''),
    ).toBe('Both files say hello – ünïcödé ✓.');
    expect(events.filter((e) => e.type === 'tool_started')).toHaveLength(2);
    // Seed A6: both calls were dispatched together — scheduled in one workflow task, before either finished.
    const history = await h.client.workflow.getHandle(turnId).fetchHistory();
    const kinds = (history.events ?? []).map((e) =>
      e.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool'
        ? 'scheduled'
        : e.activityTaskCompletedEventAttributes
          ? 'completed'
          : e.workflowTaskCompletedEventAttributes
            ? 'task'
            : '',
    );
    const firstRun = kinds.indexOf('scheduled');
    expect(kinds.slice(firstRun, firstRun + 2)).toEqual(['scheduled', 'scheduled']);

    // The second step carried the assistant's tool calls and both results, keyed by the provider's ids.
    expect(srv.seen).toHaveLength(2);
    const messages = srv.seen[1]?.body.messages as Array<Record<string, unknown>>;
    const assistant = messages.find((m) => m.role === 'assistant' && Array.isArray(m.tool_calls));
    expect((assistant?.tool_calls as Array<{ id: string; function: { name: string } }>).map((c) => [c.id, c.function.name])).toEqual([
      ['call_Xq3bV8tZk1mN2pR4sT6uW8yA', 'fs__read'],
      ['call_Lm9nB7vC5xZ3aS1dF2gH4jK6', 'fs__read'],
    ]);
    const results = messages.filter((m) => m.role === 'tool');
    expect(results.map((m) => m.tool_call_id)).toEqual(['call_Xq3bV8tZk1mN2pR4sT6uW8yA', 'call_Lm9nB7vC5xZ3aS1dF2gH4jK6']);
    expect(String(results[0]?.content)).toContain('hello from a');
    expect(String(results[1]?.content)).toContain('hello from b');

    const audit = await h.audit(turnId);
    expect(audit.filter((e) => e.type === 'ToolCall').map((e) => e.type === 'ToolCall' && e.toolId)).toEqual(['fs.read', 'fs.read']);
  });

  it('a 429 with retry-after is retried no sooner than the provider asked, then completes', async () => {
    srv.reset([{ status: 429, headers: { 'retry-after': '2' }, body: json('openai-429.json') }, { body: sse('openai-text.sse') }]);
    const { outcome, events } = await h.turn('hello');
    expect(outcome).toMatchObject({ status: 'Completed', toolCallsMade: 0 });
    expect(srv.seen).toHaveLength(2);
    const [first, second] = srv.seen;
    // Temporal's own backoff would retry after 1 s; the failure's nextRetryDelay makes it 2 s.
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(2_000);
    expect(events.some((e) => e.type === 'step_restarted')).toBe(true);
  });

  it('a context overflow (400) is not retried: the turn fails with Llm and says why', async () => {
    srv.reset([{ status: 400, body: json('openai-400-context.json') }, { body: sse('openai-text.sse') }]);
    const { outcome } = await h.turn('a very long conversation');
    expect(outcome.status).toBe('Failed');
    expect(outcome.status === 'Failed' && outcome.error).toMatchObject({
      kind: 'Llm',
      detail: { contextOverflow: true, retryable: false },
    });
    expect(outcome.status === 'Failed' && outcome.error.hint).toMatch(/shorten the history/);
    expect(srv.seen).toHaveLength(1);
  });
});

describe('Anthropic provider in a full turn', () => {
  const srv = new ReplayServer();
  let h: Harness;
  beforeAll(async () => {
    await srv.start();
    h = await startHarness({ llm: createAnthropicProvider({ baseUrl: srv.url, model: 'claude-sonnet-4-5', apiKey: 'sk-ant-test' }) });
  });
  afterAll(async () => {
    await h?.stop();
    await srv.stop();
  });

  it("a full turn with each provider's replayed stream calls two tools in parallel and completes (Anthropic)", async () => {
    srv.reset([{ body: sse('anthropic-tool-use.sse') }, { body: sse('anthropic-text.sse') }]);
    const { outcome } = await h.turn('read a.txt and b.txt');
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: 'Both files say hello – ünïcödé ✓.', toolCallsMade: 2 });
    const messages = srv.seen[1]?.body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    const last = messages.at(-1);
    expect(last?.role).toBe('user');
    expect(last?.content.map((b) => [b.type, b.tool_use_id])).toEqual([
      ['tool_result', 'toolu_01T1x1fJ34qAmk2tNTrN7Up6'],
      ['tool_result', 'toolu_01CJbE5Qh2hKd7Gm8Yk4Nw9P'],
    ]);
    expect(String(last?.content[1]?.content)).toContain('hello from b');
    expect(
      messages
        .at(-2)
        ?.content.filter((b) => b.type === 'tool_use')
        .map((b) => b.name),
    ).toEqual(['fs__read', 'fs__read']);
  });

  it('a 529 overloaded with retry-after is retried after the delay, then completes', async () => {
    srv.reset([{ status: 529, headers: { 'retry-after': '2' }, body: json('anthropic-529.json') }, { body: sse('anthropic-text.sse') }]);
    const { outcome } = await h.turn('hello');
    expect(outcome).toMatchObject({ status: 'Completed' });
    const [first, second] = srv.seen;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(2_000);
  });
});
