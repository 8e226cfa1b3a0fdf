/**
 * The REST channel against a real worker and dev server: streamed replies over SSE, bearer
 * token, loopback only, and an oversized message refused before any workflow starts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { chatTurn } from '../../channels/cli/chat.js';
import { sendMessage } from '../../channels/cli/rest-client.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import { MAX_MESSAGE_BYTES } from '../../core/limits.js';
import { sessionWorkflowId } from '../../workflows/turn-ids.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

let h: Harness;
let rest: Awaited<ReturnType<typeof startRestServer>>;
const token = randomBytes(16).toString('hex');

beforeAll(async () => {
  h = await startHarness({ script: { rules: [{ steps: [{ say: 'streamed in several pieces for you', chunks: 4 }] }] } });
  rest = await startRestServer({ gateway: h.gateway, token, audit: { verify: () => h.verify(), tail: async () => [] } });
});
afterAll(async () => {
  await rest?.stop();
  await h?.stop();
});

describe('REST channel', () => {
  it('streams a reply as SSE text events and ends with the outcome', async () => {
    const events = [];
    for await (const e of sendMessage({ url: rest.url, token }, { text: 'hi', sessionId: 'rest-s1' })) events.push(e);
    const texts = events.filter((e) => e.event === 'text');
    expect(texts.length).toBe(4);
    expect(events.at(-1)).toMatchObject({ event: 'outcome', data: { status: 'Completed', finalMessage: 'streamed in several pieces for you' } });
  });

  it('the CLI channel prints the streamed text and the outcome line', async () => {
    let out = '';
    let err = '';
    const outcome = await chatTurn({ url: rest.url, token }, 'hello', 'rest-s2', { out: (s) => (out += s), err: (s) => (err += s) });
    expect(outcome.status).toBe('Completed');
    expect(out).toBe('streamed in several pieces for you\n');
    expect(err).toMatch(/\[Completed · 0 tool call\(s\)/);
  });

  it('refuses a missing or wrong token', async () => {
    const res = await fetch(`${rest.url}/v1/messages`, { method: 'POST', headers: { authorization: 'Bearer nope' }, body: '{}' });
    expect(res.status).toBe(401);
  });

  it('refuses an oversized message with 413 and a clear error, and starts no workflow', async () => {
    const sessionId = `big-${Date.now()}`;
    const res = await fetch(`${rest.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x'.repeat(MAX_MESSAGE_BYTES - 10), sessionId }),
    });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: { kind: string; message: string; hint: string } };
    expect(body.error.kind).toBe('Channel');
    expect(body.error.message).toMatch(/the limit is 1\.00 MiB/);
    await expect(h.client.workflow.getHandle(sessionWorkflowId('rest', sessionId)).describe()).rejects.toThrow(/not found/i);
  });

  it('binds to loopback only', async () => {
    await expect(startRestServer({ gateway: h.gateway, token, audit: { verify: async () => null, tail: async () => [] }, host: '0.0.0.0' })).rejects.toThrow(/loopback only/);
  });
});
