/**
 * Provider failures as AivyxErrors, and the one streaming HTTP request both wire formats share.
 *
 * Mapping (docs/LLM-PROVIDERS.md has the table): 401/403 → Config (the API key); 429, 529 and
 * `overloaded_error` → Llm retryable with the server's `retry-after`; 408/409/5xx and network
 * failures → Llm retryable; 400-class request errors (including context overflow) → Llm
 * non-retryable. Messages never carry the API key, request bodies or headers.
 */
import { AivyxError } from '../../core/errors.js';
import type { LlmStepSink } from './llm-provider.js';
import { SseDecoder, type SseEvent } from './sse.js';

/** Where the API key comes from, named in every authentication hint. */
export const API_KEY_SETTING = 'AIVYX_LLM_API_KEY (or the secret named by AIVYX_LLM_API_KEY_SECRET)';
/** The longest `retry-after` we honour; a longer (or bogus) value is clamped. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** Abort a stream that sends no bytes for this long (the activity heartbeats on its own timer). */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
const MAX_PROVIDER_MESSAGE = 300;

/** What a provider error body says, in the fields both wire formats share. */
interface ProviderErrorBody {
  message?: string;
  type?: string;
  code?: string;
}

/** Reads `{error:{message,type,code}}` (OpenAI) or `{type:'error', error:{type,message}}` (Anthropic). */
export function parseErrorBody(body: unknown): ProviderErrorBody {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return body.trim() ? { message: body.trim() } : {};
    }
  }
  if (typeof value !== 'object' || value === null) return {};
  const rec = value as Record<string, unknown>;
  const inner =
    typeof rec.error === 'object' && rec.error !== null
      ? (rec.error as Record<string, unknown>)
      : typeof rec.error === 'string'
        ? { message: rec.error }
        : rec;
  const out: ProviderErrorBody = {};
  if (typeof inner.message === 'string') out.message = inner.message;
  if (typeof inner.type === 'string') out.type = inner.type;
  if (typeof inner.code === 'string') out.code = inner.code;
  else if (typeof inner.code === 'number') out.code = String(inner.code);
  return out;
}

/** Removes anything that looks like a credential, and bounds the length. */
export function redact(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  out = out.replace(/\b(sk|key|api|pk|rk)[-_][A-Za-z0-9_*.-]{6,}/gi, '[redacted]');
  out = out.replace(/\s+/g, ' ').trim();
  return out.length > MAX_PROVIDER_MESSAGE ? `${out.slice(0, MAX_PROVIDER_MESSAGE)}…` : out;
}

/** `retry-after-ms` (milliseconds), else `retry-after` (seconds or an HTTP date), clamped to [0, 10 min]. */
export function parseRetryAfter(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return clampDelay(Number(ms));
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  const t = ra.trim();
  if (/^\d+(\.\d+)?$/.test(t)) return clampDelay(Number(t) * 1000);
  const date = Date.parse(t);
  return Number.isNaN(date) ? undefined : clampDelay(date - now);
}

function clampDelay(ms: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Math.ceil(ms)));
}

function isContextOverflow(p: ProviderErrorBody): boolean {
  if (p.code === 'context_length_exceeded' || p.type === 'context_length_exceeded') return true;
  return /prompt is too long|maximum context length|context length|context window|too many tokens/i.test(p.message ?? '');
}

function llmError(
  provider: string,
  message: string,
  detail: { status: number | null; retryable: boolean; retryAfterMs?: number; [k: string]: unknown },
  hint?: string,
  cause?: unknown,
): AivyxError {
  const d: Record<string, unknown> = { provider, ...detail };
  for (const k of Object.keys(d)) if (d[k] === undefined) delete d[k];
  return new AivyxError('Llm', message, { detail: d, ...(hint === undefined ? {} : { hint }), ...(cause === undefined ? {} : { cause }) });
}

/** Maps a provider error (HTTP status, headers, body text) to an AivyxError. `status: null` = an error event inside a stream. */
export function providerError(input: {
  provider: string;
  status: number | null;
  headers?: Headers;
  body?: unknown;
  apiKey?: string | undefined;
  now?: number;
}): AivyxError {
  const { provider, status } = input;
  const parsed = parseErrorBody(input.body ?? '');
  const said = parsed.message ? `: ${redact(parsed.message, [input.apiKey])}` : '';
  const type = parsed.type ?? parsed.code;
  const extra = { ...(parsed.type ? { errorType: parsed.type } : {}), ...(parsed.code ? { code: parsed.code } : {}) };
  const retryAfterMs = input.headers ? parseRetryAfter(input.headers, input.now) : undefined;
  const where =
    status === null
      ? `${provider} stream error${type ? ` (${type})` : ''}`
      : `${provider} returned HTTP ${status}${type ? ` (${type})` : ''}`;

  if (status === 401 || status === 403 || parsed.type === 'authentication_error' || parsed.type === 'permission_error') {
    // The provider's own text is left out: OpenAI echoes part of a wrong key back.
    const what = status === 403 || parsed.type === 'permission_error' ? 'refused the API key for this request' : 'rejected the API key';
    return new AivyxError('Config', `${provider} ${what}${status === null ? '' : ` (HTTP ${status})`}`, {
      hint: `check the API key: ${API_KEY_SETTING}`,
      detail: { provider, status, retryable: false, ...extra },
    });
  }
  if (status === 429 || status === 529 || parsed.type === 'overloaded_error' || parsed.type === 'rate_limit_error') {
    if (parsed.code === 'insufficient_quota' || parsed.type === 'insufficient_quota') {
      return llmError(
        provider,
        `${where}: the account has no quota left${said}`,
        { status, retryable: false, ...extra },
        'check the plan and billing of the provider account',
      );
    }
    const overloaded = status === 529 || parsed.type === 'overloaded_error';
    return llmError(
      provider,
      `${where}: ${overloaded ? 'the provider is overloaded' : 'rate limited'}${said}`,
      { status, retryable: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), ...extra },
      'the step is retried after the delay the provider asked for',
    );
  }
  if (isContextOverflow(parsed) && (status === null || status === 400 || status === 413)) {
    return llmError(
      provider,
      `${where}: the conversation is too long for the model's context window${said}`,
      { status, retryable: false, contextOverflow: true, ...extra },
      'shorten the history: start a new session, or send a smaller message or attachment',
    );
  }
  if (status === 404) {
    return new AivyxError('Config', `${where}: not found${said}`, {
      hint: 'check the model name in AIVYX_LLM and the base URL in AIVYX_LLM_BASE_URL',
      detail: { provider, status, retryable: false, ...extra },
    });
  }
  if (status === null) {
    // An error event mid-stream: server-side trouble unless it says the request was bad.
    const bad = parsed.type === 'invalid_request_error' || parsed.type === 'request_too_large';
    return llmError(provider, `${where}${said}`, { status, retryable: !bad, ...extra });
  }
  if (status === 408 || status === 409 || status >= 500) {
    return llmError(provider, `${where}${said}`, {
      status,
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      ...extra,
    });
  }
  return llmError(
    provider,
    `${where}: the request was refused${said}`,
    { status, retryable: false, ...extra },
    'retrying the same request cannot help',
  );
}

/** A network failure (connection refused, reset, DNS): retryable. Only the origin is named. */
export function networkError(provider: string, url: string, err: unknown): AivyxError {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  const reason = code ?? (cause instanceof Error ? cause.message : String(cause));
  return llmError(
    provider,
    `cannot reach ${provider} at ${safeOrigin(url)}: ${redact(reason)}`,
    { status: null, retryable: true },
    'check that the provider is reachable (AIVYX_LLM_BASE_URL)',
    err,
  );
}

/** The model answered something we cannot use (malformed tool arguments, unknown event shape): not retryable. */
export function malformedResponse(provider: string, message: string): AivyxError {
  return llmError(provider, `${provider} sent a malformed response: ${message}`, { status: null, retryable: false });
}

/** The stream ended (or stalled) before the model finished: retryable. */
export function truncatedStream(provider: string, message: string): AivyxError {
  return llmError(provider, `${provider}: ${message}`, { status: null, retryable: true });
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}

/** The sink's abort reason, or a Cancelled error when there is none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new AivyxError('Cancelled', 'the LLM step was cancelled');
}

/** Inputs of `postSse`. */
export interface PostSseInput {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  fetch: typeof fetch;
  sink: LlmStepSink;
  /** Only used to redact it from provider messages. */
  apiKey?: string | undefined;
  idleTimeoutMs?: number;
}

/**
 * POSTs a JSON body and yields the SSE events of the response. Heartbeats on every chunk, stops
 * promptly on `sink.signal` (throwing its reason), aborts a stream idle for `idleTimeoutMs`, and
 * maps HTTP and network failures with `providerError`/`networkError`.
 */
export async function* postSse(input: PostSseInput): AsyncGenerator<SseEvent, void, undefined> {
  const { provider, sink } = input;
  if (sink.signal.aborted) throw abortReason(sink.signal);
  const idleMs = input.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const ctrl = new AbortController();
  const onAbort = () => ctrl.abort(sink.signal.reason);
  sink.signal.addEventListener('abort', onAbort, { once: true });
  let stalled = false;
  let idle: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      stalled = true;
      ctrl.abort();
    }, idleMs);
  };
  const failure = (e: unknown): unknown => {
    if (sink.signal.aborted) return abortReason(sink.signal);
    if (stalled) return truncatedStream(provider, `no data from the provider for ${idleMs} ms`);
    if (e instanceof AivyxError) return e;
    return networkError(provider, input.url, e);
  };
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  try {
    arm();
    let res: Response;
    try {
      res = await input.fetch(input.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...input.headers },
        body: JSON.stringify(input.body),
        signal: ctrl.signal,
      });
    } catch (e) {
      throw failure(e);
    }
    sink.heartbeat();
    if (!res.ok) {
      let text = '';
      try {
        text = await res.text();
      } catch (e) {
        throw failure(e);
      }
      throw providerError({ provider, status: res.status, headers: res.headers, body: text, apiKey: input.apiKey });
    }
    if (!res.body) throw truncatedStream(provider, 'the response has no body');
    reader = res.body.getReader();
    const decoder = new SseDecoder();
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (e) {
        throw failure(e);
      }
      if (chunk.done) break;
      arm();
      sink.heartbeat();
      for (const ev of decoder.feed(chunk.value)) {
        if (sink.signal.aborted) throw abortReason(sink.signal);
        yield ev;
      }
    }
    yield* decoder.end();
    reader = undefined;
  } finally {
    clearTimeout(idle);
    sink.signal.removeEventListener('abort', onAbort);
    // The consumer stopped early (or we failed): close the connection.
    if (reader) {
      ctrl.abort();
      reader.cancel().catch(() => undefined);
    }
  }
}

/** Parses one event's JSON data, or fails as a malformed response. */
export function eventJson(provider: string, ev: SseEvent): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(ev.data);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw malformedResponse(provider, `an event${ev.event !== 'message' ? ` "${ev.event}"` : ''} whose data is not a JSON object`);
}
