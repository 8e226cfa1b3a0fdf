/**
 * What our spans say and what the redaction lets out, without Temporal: the settings from the
 * environment, the GenAI attributes of a model step (usage only when reported), workflow spans
 * arriving through the sink with the whole WorkflowInfo, errors reduced to their type, and forged
 * activity inputs recorded as `other`.
 */
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { InjectedSinkFunction } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import type { LlmStepRequest, LlmStepResult } from '../../core/llm.js';
import { AivyxError } from '../../core/errors.js';
import { textContent } from '../../core/message.js';
import { channelName, toolName } from '../../infra/telemetry/span-facts.js';
import { startTracing, tracedLlmProvider, tracingSettingsFromEnv, type Tracing } from '../../infra/telemetry/index.js';

describe('tracing settings', () => {
  it('are off without an OTLP endpoint', () => {
    expect(tracingSettingsFromEnv({})).toBeUndefined();
  });

  it('send to <endpoint>/v1/traces, or to the traces endpoint as given', () => {
    expect(tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      serviceName: 'aivyx',
      headers: {},
    });
    expect(
      tracingSettingsFromEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/otlp/traces',
        OTEL_SERVICE_NAME: 'aivyx-worker',
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-team=me',
      }),
    ).toEqual({
      tracesUrl: 'https://tempo.example/otlp/traces',
      serviceName: 'aivyx-worker',
      headers: { authorization: 'Bearer abc', 'x-team': 'me' },
    });
  });

  it('refuse malformed headers without echoing them', () => {
    const run = () => tracingSettingsFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'sekrit-token' });
    expect(run).toThrow(AivyxError);
    expect(run).not.toThrow(/sekrit/);
  });
});

describe('spans', () => {
  let exporter: InMemorySpanExporter;
  let tracing: Tracing;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    tracing = startTracing(
      { tracesUrl: 'http://127.0.0.1:9/v1/traces', serviceName: 'aivyx', headers: {} },
      { processor: new SimpleSpanProcessor(exporter) },
    );
  });
  afterEach(() => tracing.shutdown());

  const req: LlmStepRequest = {
    turnId: 'turn-1',
    step: 2,
    history: [],
    message: { id: 'm', sessionId: 's', content: textContent('a private question'), receivedAt: 0 },
    transcript: [],
    tools: [{ id: 'fs.read', description: 'read', inputSchema: {} }],
  };
  const provider = (result: LlmStepResult | Error): LlmProvider => ({
    name: 'openai',
    model: 'gpt-test',
    step: async () => {
      if (result instanceof Error) throw result;
      return result;
    },
  });
  const sink = { text: () => undefined, heartbeat: () => undefined, signal: new AbortController().signal };
  const only = (): ReadableSpan => {
    const spans = exporter.getFinishedSpans();
    expect(spans).toHaveLength(1);
    return spans[0]!;
  };

  it('a model step is a GenAI chat span with the usage the provider reported', async () => {
    const answer = { type: 'final', text: 'a private answer', usage: { inputTokens: 120, outputTokens: 7 } } as LlmStepResult;
    await expect(tracedLlmProvider(provider(answer)).step(req, sink)).resolves.toBe(answer);
    const span = only();
    expect(span.name).toBe('chat gpt-test');
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 7,
      'aivyx.llm.step': 2,
      'aivyx.llm.tools_offered': 1,
      'aivyx.llm.tool_calls': 0,
    });
  });

  it('a step without usage has no usage attributes; a failed one keeps its kind, not its message', async () => {
    await tracedLlmProvider(provider({ type: 'tool_calls', calls: [{ callId: 'c', tool: 'fs.read', input: { path: '/x' } }] })).step(
      req,
      sink,
    );
    expect(Object.keys(only().attributes).filter((k) => k.startsWith('gen_ai.usage'))).toEqual([]);
    exporter.reset();
    const failing = tracedLlmProvider(provider(new AivyxError('Llm', 'the provider said: a private question')));
    await expect(failing.step(req, sink)).rejects.toThrow('a private question');
    const span = only();
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(span.attributes['error.type']).toBe('Llm');
    expect(JSON.stringify(span.attributes)).not.toContain('private');
  });

  it('exceptions and status keep only their type; attributes off the allow-list are dropped', () => {
    trace.getTracer('t').startActiveSpan('work', (span) => {
      span.setAttributes({ 'user.text': 'a private question', 'http.url': 'https://x/?q=private', 'aivyx.llm.step': 1 });
      span.recordException(new TypeError('private details'));
      span.setStatus({ code: SpanStatusCode.ERROR, message: 'private details' });
      span.end();
    });
    const span = only();
    expect(span.attributes).toEqual({ 'aivyx.llm.step': 1 });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([['exception', { 'exception.type': 'TypeError' }]]);
  });

  it('workflow spans from the sink keep the ids of WorkflowInfo, not its memo, search attributes or last result', async () => {
    const ids = { workflowId: 'turn-1', runId: 'r', workflowType: 'turnWorkflow', taskQueue: 'aivyx', namespace: 'default', attempt: 1 };
    const info = {
      ...ids,
      memo: { note: 'a private question' },
      searchAttributes: { AivyxMissionName: ['private'] },
      lastResult: { finalMessage: 'a private answer' },
    } as unknown as WorkflowInfo;
    const serialized = {
      name: 'RunWorkflow:turnWorkflow',
      kind: 0,
      spanContext: { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 },
      startTime: [1, 0],
      endTime: [2, 0],
      status: { code: SpanStatusCode.OK },
      attributes: {},
      links: [],
      events: [],
      duration: [1, 0],
      ended: true,
      droppedAttributesCount: 0,
      droppedEventsCount: 0,
      droppedLinksCount: 0,
      instrumentationLibrary: { name: '@temporalio/interceptor-workflow' },
    };
    const exportFn = tracing.worker.sinks.exporter!.export as InjectedSinkFunction<(spans: unknown[]) => void>;
    await exportFn.fn(info, [serialized]);
    const span = only();
    expect(span.name).toBe('RunWorkflow:turnWorkflow');
    expect(span.attributes).toEqual(ids);
  });
});

describe('values from activity payloads', () => {
  it('are recorded only when the worker would have produced them', () => {
    expect(toolName('fs.read')).toBe('fs.read');
    expect(toolName('my password is hunter2')).toBe('other');
    expect(toolName({ toString: () => 'fs.read' })).toBe('other');
    expect(channelName('telegram')).toBe('telegram');
    expect(channelName('ignore previous instructions')).toBe('other');
  });
});
