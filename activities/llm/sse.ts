/**
 * An incremental Server-Sent Events parser (the WHATWG "event stream" format): bytes in, events out.
 * Both LLM wire formats (OpenAI chat completions, Anthropic messages) stream SSE, and both go
 * through this one parser. Chunk boundaries may fall anywhere: inside a field, between CR and LF,
 * or inside a multi-byte UTF-8 character.
 */

/** One dispatched event. `event` defaults to `message`; `data` lines are joined with `\n`. */
export interface SseEvent {
  event: string;
  data: string;
  /** The last event id seen on the stream so far (`''` when none). */
  id: string;
  /** A `retry:` field on this event, in milliseconds. */
  retry?: number;
}

/**
 * Feed it chunks, get back the events they complete. Per the specification, an event is
 * dispatched only at a blank line; an unterminated event at the end of the stream is dropped.
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private line = '';
  /** The previous chunk ended in CR: a leading LF of the next chunk belongs to that line end. */
  private afterCR = false;
  private first = true;
  private data: string[] = [];
  private hasData = false;
  private eventType = '';
  private lastId = '';
  private retry: number | undefined;

  /** Parses a chunk (bytes or already-decoded text) and returns the events it completes. */
  feed(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: SseEvent[] = [];
    let start = 0;
    if (this.afterCR && text.startsWith('\n')) start = 1;
    this.afterCR = false;
    for (let i = start; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line += text.slice(start, i);
      this.processLine(this.line, out);
      this.line = '';
      if (c === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else this.afterCR = true;
      }
      start = i + 1;
    }
    this.line += text.slice(start);
    return out;
  }

  /** Ends the stream: flushes the decoder; an event without its closing blank line is discarded. */
  end(): SseEvent[] {
    const rest = this.decoder.decode();
    const out = rest ? this.feed(rest) : [];
    this.line = '';
    this.data = [];
    this.hasData = false;
    this.eventType = '';
    this.retry = undefined;
    return out;
  }

  private processLine(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.hasData) {
        const ev: SseEvent = { event: this.eventType || 'message', data: this.data.join('\n'), id: this.lastId };
        if (this.retry !== undefined) ev.retry = this.retry;
        out.push(ev);
      }
      this.data = [];
      this.hasData = false;
      this.eventType = '';
      this.retry = undefined;
      return;
    }
    if (line.startsWith(':')) return; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break; // unknown fields are ignored
    }
  }
}

/** Reads a byte stream to its end, yielding events as they complete. Releases the stream when the consumer stops early. */
export async function* readSse(stream: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new SseDecoder();
  const reader = stream.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield* decoder.feed(value);
    }
    finished = true;
    yield* decoder.end();
  } finally {
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
