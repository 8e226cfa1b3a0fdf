/**
 * Traces across processes: a worker in a child process and the channel side (the gateway) here,
 * both exporting OTLP/HTTP JSON to a collector in this test. Each turn is one trace rooted at the
 * gateway's update-with-start span, holding the turn workflow, its LLM steps (GenAI attributes)
 * and tool calls from the worker process; the user's text, the tool's input and output never
 * appear in anything exported.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { awaitTurnOutcome, buildTurnRequest, submitTurn } from '../../channels/turn-client.js';
import { textContent } from '../../core/message.js';
import { createAttestor } from '../../infra/attestation.js';
import { aivyxDataConverter, createPayloadCodec } from '../../infra/codec/index.js';
import { openDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { startTracing } from '../../infra/telemetry/index.js';
import { createTestDatabase } from '../support/postgres.js';
import { testConnection, uniqueTaskQueue } from '../support/temporal.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';
import { startWorkerProcess } from '../support/worker-child.js';

/** An OTLP JSON attribute value. */
type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; arrayValue?: { values: AnyValue[] } };
type KeyValue = { key: string; value: AnyValue };

/** A span as received, with its process's resource attributes. */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

function plain(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return v.arrayValue.values.map(plain);
  return v;
}

function attrs(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

/** A tiny OTLP/HTTP collector: POST /v1/traces with JSON bodies. */
function startCollector(): Promise<{ server: Server; url: string; bodies: string[]; spans: ReceivedSpan[] }> {
  const bodies: string[] = [];
  const spans: ReceivedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      bodies.push(body);
      const parsed = JSON.parse(body) as {
        resourceSpans: Array<{
          resource: { attributes: KeyValue[] };
          scopeSpans: Array<{ spans: Array<Omit<ReceivedSpan, 'attributes' | 'resource'> & { attributes?: KeyValue[] }> }>;
        }>;
      };
      for (const rs of parsed.resourceSpans)
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              attributes: attrs(s.attributes),
              resource: attrs(rs.resource.attributes),
            });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, bodies, spans });
    }),
  );
}

const SECRET_TEXT = 'my locker code is zebra-4242';
const dir = mkdtempSync(join(tmpdir(), 'aivyx-otel-'));
const notes = join(dir, 'private-notes.txt');
const NOTES_CONTENT = 'the-content-of-the-notes-file';
const scriptFile = join(dir, 'script.json');

let pg: Awaited<ReturnType<typeof createTestDatabase>>;
let collector: Awaited<ReturnType<typeof startCollector>>;
let worker: ChildProcess | undefined;

beforeAll(async () => {
  writeFileSync(notes, NOTES_CONTENT);
  // The model reads a file, then echoes the user's message: both must stay out of the traces.
  writeFileSync(
    scriptFile,
    JSON.stringify({ rules: [{ steps: [{ call: [{ tool: 'fs.read', input: { path: notes } }] }, { say: 'you said: {{message}}' }] }] }),
  );
  pg = await createTestDatabase('otel');
  collector = await startCollector();
});

afterAll(async () => {
  worker?.kill('SIGKILL');
  collector?.server.close();
  await pg?.drop();
});

function startWorker(taskQueue: string): Promise<ChildProcess> {
  return startWorkerProcess({
    DATABASE_URL: pg.url,
    AIVYX_TEST_TEMPORAL_ADDRESS: inject('temporalAddress'),
    AIVYX_TASK_QUEUE: taskQueue,
    AIVYX_SCRIPT: scriptFile,
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_SERVICE_NAME: 'aivyx',
  });
}

it('puts each turn in one trace across the gateway and worker processes, without user text', async () => {
  const { db, close } = await openDatabase({ databaseUrl: pg.url });
  const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  await close();
  const taskQueue = uniqueTaskQueue('otel');
  worker = await startWorker(taskQueue);
  const running = worker;

  const tracing = startTracing({ tracesUrl: `${collector.url}/v1/traces`, serviceName: 'aivyx', headers: {} }, { role: 'gateway' });
  const shared = await testConnection();
  const client = new Client({
    connection: shared.client.connection,
    dataConverter: aivyxDataConverter(createPayloadCodec(master.subkey('payload'))),
    interceptors: tracing.clientInterceptors,
  });
  const deps = { client, taskQueue, attestor: createAttestor(master.subkey('attestation')) };
  const channel = { name: 'test', platform: 'Local' as const, trustTier: 'Trusted' as const, sessionId: `s-${randomUUID()}`, sender: 't' };
  // Two turns of one session: the second starts from the session's loop, yet gets its own trace.
  const turnIds: string[] = [];
  for (const text of [SECRET_TEXT, `${SECRET_TEXT} again`]) {
    const req = buildTurnRequest(channel, {
      id: randomUUID(),
      sessionId: channel.sessionId,
      content: textContent(text),
      receivedAt: Date.now(),
    });
    const { turnWorkflowId } = await submitTurn(deps, req);
    const outcome = await awaitTurnOutcome(client, turnWorkflowId);
    expect(outcome).toMatchObject({ status: 'Completed', finalMessage: `you said: ${text}`, toolCallsMade: 1 });
    turnIds.push(turnWorkflowId);
  }
  // Both processes flush on shutdown: the worker on SIGTERM, the gateway here.
  const exited = new Promise((r) => running.once('exit', r));
  running.kill('SIGTERM');
  await exited;
  worker = undefined;
  await tracing.shutdown();

  const spans = collector.spans;
  const gatewaySpans = spans.filter((s) => s.resource['aivyx.process.role'] === 'gateway');
  const workerSpans = spans.filter((s) => s.resource['aivyx.process.role'] === 'worker');
  expect(gatewaySpans.length).toBeGreaterThan(0);
  expect(workerSpans.length).toBeGreaterThan(0);
  // Two processes: distinct instance ids and pids.
  const gw = gatewaySpans[0]!.resource;
  const wk = workerSpans[0]!.resource;
  expect(gw['service.name']).toBe('aivyx');
  expect(gw['service.instance.id']).not.toBe(wk['service.instance.id']);
  expect(gw['process.pid']).toBe(process.pid);
  expect(wk['process.pid']).not.toBe(process.pid);

  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const submits = gatewaySpans.filter((s) => s.name === 'UpdateWithStartWorkflow:submitTurn');
  expect(submits).toHaveLength(2);
  for (const [i, submit] of submits.entries()) {
    const trace = spans.filter((s) => s.traceId === submit.traceId);
    const names = trace.filter((s) => s.resource['aivyx.process.role'] === 'worker').map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'RunWorkflow:turnWorkflow',
        'RunActivity:llmStep',
        'chat scripted',
        'execute_tool fs.read',
        'RunActivity:finalizeTurn',
      ]),
    );
    // The turn workflow's span descends from the gateway's span (through the session's child start).
    const turn = trace.find((s) => s.name === 'RunWorkflow:turnWorkflow')!;
    expect(turn.attributes.workflowId).toBe(turnIds[i]);
    let up: ReceivedSpan | undefined = turn;
    while (up && up.spanId !== submit.spanId) up = up.parentSpanId ? byId.get(up.parentSpanId) : undefined;
    expect(up, 'the turn span descends from the submit span').toBe(submit);

    const chats = trace.filter((s) => s.name === 'chat scripted');
    expect(chats).toHaveLength(2);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.system': 'scripted',
      'gen_ai.request.model': 'scripted',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'aivyx.llm.step': 0,
      'aivyx.llm.tool_calls': 1,
    });
    // The tokens each step used (the scripted model counts one per 4 characters: docs/SCRIPTED-LLM.md).
    expect(chats[0]!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(chats[0]!.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
    expect(trace.find((s) => s.name === 'execute_tool fs.read')!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'fs.read',
      'aivyx.tool.outcome': 'Completed',
      // The first turn read untrusted content (a file outside the trusted roots), shown to the model (this
      // worker shows results: test/support/worker-process.ts); the second was made after it.
      'aivyx.tool.untrusted_output': true,
      'aivyx.tool.held': false,
      'aivyx.tool.tainted': i === 1,
    });
    expect(trace.find((s) => s.name === 'RunActivity:finalizeTurn')!.attributes).toMatchObject({
      'aivyx.turn.outcome': 'Completed',
      'aivyx.channel.name': 'test',
      'aivyx.channel.trust_tier': 'Trusted',
      'aivyx.turn.tool_calls': 1,
    });
  }
  expect(new Set(submits.map((s) => s.traceId)).size).toBe(2);

  // Nothing exported holds the user's words, the tool's input or what it read.
  const exported = collector.bodies.join('\n');
  for (const secret of ['zebra-4242', 'locker code', notes, 'private-notes', NOTES_CONTENT]) expect(exported).not.toContain(secret);
}, 120_000);
