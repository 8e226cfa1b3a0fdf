/**
 * End to end with the payload codec on: the server's copy of a turn's history holds no plaintext of
 * what the user said (inputs, results, updates, summaries, failures), yet the codec client and the
 * codec server (with its token) read it back.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { aivyxDataConverter, createPayloadCodec, ENCRYPTED_ENCODING, startCodecServer, type CodecServer } from '../../infra/codec/index.js';
import { sessionWorkflowId } from '../../workflows/turn-ids.js';
import { testConnection } from '../support/temporal.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const UI_ORIGIN = 'http://127.0.0.1:8233';

/** Every form in which `phrase` could show up in raw bytes: utf8, and base64 at each of the 3 alignments. */
function leakForms(phrase: string): string[] {
  const forms = [phrase];
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.concat([Buffer.alloc(shift), Buffer.from(phrase)]).toString('base64');
    // Drop the characters that also depend on the unknown neighbouring bytes.
    forms.push(b64.slice(shift === 0 ? 0 : Math.ceil((shift * 4) / 3) + 1, -4));
  }
  return forms;
}

/** The raw (still encoded) history of a workflow, as the server stores it, serialized to bytes. */
async function rawHistoryBytes(raw: Client, workflowId: string): Promise<{ bytes: Buffer; history: temporal.api.history.v1.IHistory }> {
  const history = await raw.workflow.getHandle(workflowId).fetchHistory();
  return { bytes: Buffer.from(temporal.api.history.v1.History.encode(history).finish()), history };
}

function expectNoPlaintext(bytes: Buffer, phrase: string): void {
  const text = bytes.toString('latin1');
  for (const form of leakForms(phrase)) expect(text.includes(form), `"${form}" found in the raw history`).toBe(false);
  // And the check itself works: the phrase is findable in a buffer that does hold it.
  expect(
    Buffer.from(`x${Buffer.from(phrase).toString('base64')}`)
      .toString('latin1')
      .includes(leakForms(phrase)[1]!),
  ).toBe(true);
}

/** Every payload object anywhere in a (raw) history. */
/**
 * Every payload in `value` that our codec wrote. Temporal's own bookkeeping in marker events — a patch's
 * id, a local activity's sequence number, type and times — and search attributes (the patch's
 * `TemporalChangeVersion`) are written by the SDK core, not through the codec: they go to `core`
 * (checked separately: nothing of ours in them).
 */
function payloadsIn(value: unknown, out: Payload[] = [], core: Payload[] = []): Payload[] {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return out;
  const v = value as { metadata?: Record<string, Uint8Array>; data?: Uint8Array };
  if (v.metadata && typeof v.metadata === 'object' && v.metadata.encoding instanceof Uint8Array)
    out.push({ metadata: { ...v.metadata }, data: v.data ?? new Uint8Array() });
  const marker = (value as { markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, unknown> } })
    .markerRecordedEventAttributes;
  for (const [key, child] of Object.entries(value)) {
    // Search attributes are indexed by the server, so never encoded (here: the patch's TemporalChangeVersion).
    if (key === 'searchAttributes') {
      payloadsIn(child, core, core);
      continue;
    }
    if (key === 'markerRecordedEventAttributes' && marker?.details) {
      for (const [name, detail] of Object.entries(marker.details)) {
        // A local activity's result is ours (encrypted); the rest of a core marker is the core's.
        const ours = marker.markerName === 'core_local_activity' && name === 'result';
        payloadsIn(detail, ours ? out : core, core);
      }
      continue;
    }
    payloadsIn(child, out, core);
  }
  return out;
}

/** The SDK core's own marker payloads in `history` (see `payloadsIn`). */
function corePayloadsIn(history: unknown): Payload[] {
  const core: Payload[] = [];
  payloadsIn(history, [], core);
  return core;
}

const b64 = (b: Uint8Array | null | undefined): string => Buffer.from(b ?? new Uint8Array()).toString('base64');

describe('encrypted histories', () => {
  let h: Harness;
  let raw: Client;
  let codecServer: CodecServer;
  const token = randomBytes(32).toString('hex');
  const phrase = `aivyx-secret-${randomUUID()}`;
  const sessionId = `s-${randomUUID()}`;
  let turnId: string;

  beforeAll(async () => {
    h = await startHarness({
      codec: true,
      script: {
        rules: [
          { match: 'fail-me', steps: [{ fail: 'provider refused: {{message}}' }] },
          // A tool call carrying the phrase puts it into activity inputs and a Failed tool outcome too.
          { steps: [{ call: [{ tool: 'fs.read', input: { path: '/nonexistent/{{message}}' } }] }, { say: 'You said: {{message}}' }] },
        ],
      },
    });
    raw = (await testConnection()).client;
    codecServer = await startCodecServer({ codec: createPayloadCodec(h.master.subkey('payload')), token, allowedOrigin: UI_ORIGIN });
    const r = await h.turn(`remember ${phrase}`, { sessionId });
    turnId = r.turnId;
    expect(r.outcome).toMatchObject({ status: 'Completed', finalMessage: `You said: remember ${phrase}` });
  });
  afterAll(async () => {
    await codecServer?.stop();
    await h?.stop();
  });

  it('stores no plaintext of the message in the turn or session history', async () => {
    const turn = await rawHistoryBytes(raw, turnId);
    expectNoPlaintext(turn.bytes, phrase);
    const session = await rawHistoryBytes(raw, sessionWorkflowId('test', sessionId));
    expectNoPlaintext(session.bytes, phrase);
    // The session's static summary names the session; it is a payload like any other.
    const started = session.history.events?.[0];
    expect(Buffer.from(started?.userMetadata?.summary?.metadata?.encoding ?? new Uint8Array()).toString()).toBe(ENCRYPTED_ENCODING);
    const payloads = [...payloadsIn(turn.history), ...payloadsIn(session.history)];
    expect(payloads.length).toBeGreaterThan(5);
    for (const p of payloads) expect(Buffer.from(p.metadata!.encoding!).toString()).toBe(ENCRYPTED_ENCODING);
    // The core's marker bookkeeping (local bookkeeping: its patch and local activities) names only our
    // patches, activity types, sequence numbers and times.
    const core = corePayloadsIn(turn.history).map((p) => JSON.parse(Buffer.from(p.data!).toString()) as unknown);
    expect(core.length).toBeGreaterThan(0);
    const texts = core
      .flatMap((c) => Object.values(typeof c === 'object' && c !== null ? c : { value: c }))
      .filter((x) => typeof x === 'string');
    for (const t of texts)
      expect(t).toMatch(/^(local-bookkeeping|deferred-tools|openTurn|recordScopeDenied|recordToolCall|finalizeTurn|\d+)$/);
  });

  it('the codec client reads the decoded result', async () => {
    const result = (await h.client.workflow.getHandle(turnId).result()) as { finalMessage: string };
    expect(result.finalMessage).toContain(phrase);
  });

  it('a failed turn keeps its failure messages encrypted (activity and workflow failures)', async () => {
    const secret = `aivyx-secret-${randomUUID()}`;
    const r = await h.turn(`fail-me ${secret}`, { sessionId: `s-${randomUUID()}` });
    expect(r.outcome.status).toBe('Failed');
    expect(JSON.stringify(r.outcome)).toContain(secret);
    const { bytes, history } = await rawHistoryBytes(raw, r.turnId);
    expectNoPlaintext(bytes, secret);
    const failed = history.events?.find((e) => e.workflowExecutionFailedEventAttributes)?.workflowExecutionFailedEventAttributes;
    expect(failed?.failure?.message).toBe('Encoded failure');
  });

  it('a client holding another key id gets a Crypto error naming the key ids', async () => {
    const other = new Client({
      connection: raw.connection,
      namespace: raw.options.namespace,
      dataConverter: aivyxDataConverter(createPayloadCodec(h.master.subkey('payload'), 'payload-v2')),
    });
    const err = await other.workflow
      .getHandle(turnId)
      .result()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(AivyxError);
    expect((err as AivyxError).kind).toBe('Crypto');
    expect((err as AivyxError).message).toMatch(/"payload-v1".*"payload-v2"/);
  });

  it('the codec server decodes the raw payloads with the token and refuses without it', async () => {
    const { history } = await rawHistoryBytes(raw, turnId);
    const body = JSON.stringify({
      payloads: payloadsIn(history).map((p) => ({
        metadata: Object.fromEntries(Object.entries(p.metadata!).map(([k, v]) => [k, b64(v)])),
        data: b64(p.data),
      })),
    });
    const headers = { 'content-type': 'application/json', 'x-namespace': 'default', origin: UI_ORIGIN };

    const ok = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${token}` },
      body,
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(UI_ORIGIN);
    const decoded = (await ok.json()) as { payloads: Array<{ metadata: Record<string, string>; data: string }> };
    expect(decoded.payloads.every((p) => Buffer.from(p.metadata.encoding!, 'base64').toString() !== ENCRYPTED_ENCODING)).toBe(true);
    expect(decoded.payloads.map((p) => Buffer.from(p.data, 'base64').toString()).join('\n')).toContain(phrase);

    const refused = await fetch(`${codecServer.url}/decode`, { method: 'POST', headers, body });
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain(phrase);

    const preflight = await fetch(`${codecServer.url}/decode`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });
});
