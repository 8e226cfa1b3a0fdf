/** The SSE parser: fields, multi-line data, comments, line endings, and chunk boundaries anywhere. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readSse, SseDecoder, type SseEvent } from '../../activities/llm/sse.js';

const fixtures = join(import.meta.dirname, '../fixtures/llm');
const enc = new TextEncoder();

function parseAll(chunks: Array<string | Uint8Array>): SseEvent[] {
  const d = new SseDecoder();
  const out: SseEvent[] = [];
  for (const c of chunks) out.push(...d.feed(c));
  out.push(...d.end());
  return out;
}

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

const SAMPLE =
  'event: add\r\ndata: first\r\ndata:  second line\r\nid: 7\r\n\r\n: a comment\n\ndata\nretry: 1500\n\rdata: ünï ✓ 🎉\rid: 8\r\r';
const SAMPLE_EVENTS: SseEvent[] = [
  { event: 'add', data: 'first\n second line', id: '7' },
  { event: 'message', data: '', id: '7', retry: 1500 },
  { event: 'message', data: 'ünï ✓ 🎉', id: '8' },
];

describe('SseDecoder', () => {
  it('parses event, data, id and retry fields; joins multi-line data; skips comments', () => {
    expect(parseAll([SAMPLE])).toEqual(SAMPLE_EVENTS);
  });

  it('gives the same events for every split of the bytes into two chunks (CR/LF pairs and UTF-8 characters split too)', () => {
    const bytes = enc.encode(SAMPLE);
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseAll([bytes.slice(0, i), bytes.slice(i)]), `split at ${i}`).toEqual(SAMPLE_EVENTS);
    }
  });

  it('gives the same events byte by byte and in random chunkings', () => {
    const bytes = enc.encode(SAMPLE);
    expect(parseAll(Array.from(bytes, (b) => Uint8Array.of(b)))).toEqual(SAMPLE_EVENTS);
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let round = 0; round < 200; round++) {
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < bytes.length;) {
        const n = 1 + Math.floor(rand() * 9);
        chunks.push(bytes.slice(i, i + n));
        i += n;
      }
      expect(parseAll(chunks)).toEqual(SAMPLE_EVENTS);
    }
  });

  it('a split between CR and LF ends one line, not two', () => {
    expect(parseAll(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([{ event: 'message', data: 'a\nb', id: '' }]);
  });

  it('strips exactly one space after the colon; a field without a colon has an empty value', () => {
    expect(parseAll(['data:  two\ndata:none\ndata\n\n'])).toEqual([{ event: 'message', data: ' two\nnone\n', id: '' }]);
  });

  it('does not dispatch an event without data, and drops an unterminated event at the end', () => {
    expect(parseAll(['event: lonely\n\n', 'data: never finished'])).toEqual([]);
  });

  it('ignores unknown fields, a non-numeric retry and an id with NUL; the event type resets after dispatch', () => {
    expect(parseAll(['foo: bar\nretry: 1s\nid: a\u0000b\nevent: x\ndata: 1\n\ndata: 2\n\n'])).toEqual([
      { event: 'x', data: '1', id: '' },
      { event: 'message', data: '2', id: '' },
    ]);
  });

  it('strips a leading byte-order mark only', () => {
    expect(parseAll([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf), 'data: x\n\n'])).toEqual([{ event: 'message', data: 'x', id: '' }]);
  });

  it('reads the recorded OpenAI and Anthropic streams', () => {
    const openai = parseAll([readFileSync(join(fixtures, 'openai-tool-calls.sse'))]);
    expect(openai.at(-1)).toEqual({ event: 'message', data: '[DONE]', id: '' });
    expect(openai.slice(0, -1).every((e) => JSON.parse(e.data).object === 'chat.completion.chunk')).toBe(true);
    const anthropic = parseAll([readFileSync(join(fixtures, 'anthropic-tool-use.sse'))]);
    expect(anthropic.filter((e) => e.event === 'content_block_delta').length).toBe(9);
    for (const e of anthropic) expect(JSON.parse(e.data).type).toBe(e.event);
    expect(anthropic.at(-1)?.event).toBe('message_stop');
  });
});

describe('readSse', () => {
  it('yields the events of a byte stream', async () => {
    const out: SseEvent[] = [];
    for await (const e of readSse(streamOf([enc.encode('data: a\n'), enc.encode('\ndata: b\n\n')]))) out.push(e);
    expect(out.map((e) => e.data)).toEqual(['a', 'b']);
  });

  it('cancels the stream when the consumer stops early', async () => {
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(enc.encode('data: tick\n\n'));
      },
      cancel() {
        cancelled = true;
      },
    });
    let n = 0;
    for await (const _ of readSse(stream)) if (++n === 3) break;
    expect(n).toBe(3);
    expect(cancelled).toBe(true);
  });
});
