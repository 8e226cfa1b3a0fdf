/**
 * A small Telegram Bot API emulator on 127.0.0.1 for tests: grammY talks to it over real HTTP
 * (`client: { apiRoot }`). It speaks getMe, deleteWebhook, getUpdates (offset + long-poll
 * timeout, confirming like Telegram does), sendMessage and editMessageText (with inline
 * keyboards), editMessageReplyMarkup, answerCallbackQuery, sendChatAction, getFile and file
 * download, sendPhoto and sendDocument as multipart uploads (`uploads`), records every call, builds button-press updates, and injects 4xx/429/5xx faults.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One recorded API call (successful or failed). */
export interface RecordedCall {
  method: string;
  params: Record<string, unknown>;
  /** HTTP status the emulator answered with. */
  status: number;
  at: number;
}

/** A message the bot sent, as the emulator keeps it (text follows edits). */
export interface SentMessage {
  chatId: number;
  messageId: number;
  text: string;
  edits: number;
  /** The inline keyboard currently under the message (absent when none). */
  replyMarkup?: { inline_keyboard: { text: string; callback_data?: string }[][] };
}

/** A file in a multipart upload. */
interface Upload {
  fileName: string;
  bytes: Buffer;
}

/** A photo or document the bot uploaded. */
export interface SentUpload extends Upload {
  method: 'sendPhoto' | 'sendDocument';
  chatId: number;
  messageId: number;
}

/** A fault to answer the next call of a method with. */
export type Fault = { status: 429; retryAfter: number } | { status: 500 | 502 | 503 } | { status: 400 | 403; description: string };

/** Minimal user/chat shapes for building updates in tests. */
export interface TgUser {
  id: number;
  first_name?: string;
  username?: string;
}

/** The emulator's controls. */
export interface BotApiEmulator {
  /** e.g. `http://127.0.0.1:PORT` — pass as grammY's `client.apiRoot`. */
  apiRoot: string;
  token: string;
  calls: RecordedCall[];
  /** Every message the bot sent, by `chatId:messageId`. */
  sent: Map<string, SentMessage>;
  /** Every photo and document the bot uploaded (sendPhoto, sendDocument as multipart), in order. */
  uploads: SentUpload[];
  /** Queues an update (assigns `update_id` when absent) and wakes long polls; returns it. */
  pushUpdate(update: Record<string, unknown>): Record<string, unknown> & { update_id: number };
  /** A private-chat text message update from `user` (chat id = user id). */
  textUpdate(
    user: TgUser,
    text: string,
    chat?: { id: number; type: 'private' | 'group' | 'supergroup' },
  ): Record<string, unknown> & { update_id: number };
  /** A user pressing a button with `data` under `message` (in the message's chat, a private chat unless `chatType` says otherwise). */
  pressButton(
    user: TgUser,
    message: SentMessage,
    data: string,
    chatType?: 'private' | 'group' | 'supergroup',
  ): Record<string, unknown> & { update_id: number };
  /** The `answerCallbackQuery` texts given for callback query `id`. */
  answersTo(id: string): string[];
  /** Stores a downloadable file; returns its `file_id`. */
  addFile(bytes: Buffer, filePath: string): string;
  /** The next `count` calls of `method` fail with `fault`. */
  failNext(method: string, fault: Fault, count?: number): void;
  /** The next `count` calls of `method` whose params satisfy `match` fail with `fault` (others pass). */
  failMatching(method: string, match: (params: Record<string, unknown>) => boolean, fault: Fault, count?: number): void;
  /** Successful calls of a method. */
  ok(method: string): RecordedCall[];
  /** The lowest update id not yet confirmed by a getUpdates offset. */
  confirmedOffset(): number;
  /** The most getUpdates calls ever in flight at once (Telegram answers a second poller 409 Conflict). */
  maxConcurrentPolls(): number;
  /** Resolves when `pred` holds (polled every 20 ms), or rejects after `timeoutMs`. */
  waitFor(pred: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

/** Starts an emulator for bot `token` on an ephemeral 127.0.0.1 port. */
export async function startBotApiEmulator(token = '123456:TEST-token'): Promise<BotApiEmulator> {
  const calls: RecordedCall[] = [];
  const sent = new Map<string, SentMessage>();
  const uploads: SentUpload[] = [];
  const queue: Array<Record<string, unknown> & { update_id: number }> = [];
  const files = new Map<string, { bytes: Buffer; path: string }>();
  const faults = new Map<string, Fault[]>();
  const matchingFaults: { method: string; match: (p: Record<string, unknown>) => boolean; fault: Fault }[] = [];
  const waiters = new Set<() => void>();
  let nextUpdateId = 1000;
  let nextMessageId = 1;
  let nextFileId = 1;
  let nextCallbackId = 1;
  let confirmed = 0;
  let polling = 0;
  let maxPolling = 0;

  const wake = (): void => {
    for (const w of [...waiters]) w();
  };

  async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    const raw = bytes.toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    if (raw.length === 0) return params;
    const type = req.headers['content-type'] ?? '';
    if (type.includes('multipart/form-data')) return { ...params, ...multipart(bytes, type) };
    if (type.includes('json')) return { ...params, ...(JSON.parse(raw) as Record<string, unknown>) };
    if (type.includes('x-www-form-urlencoded')) return { ...params, ...Object.fromEntries(new URLSearchParams(raw)) };
    return params;
  }

  /** A multipart upload (sendPhoto, sendDocument): `attach://<field>` values become the uploaded file. */
  function multipart(bytes: Buffer, type: string): Record<string, unknown> {
    const boundary = /boundary="?([^";]+)"?/.exec(type)?.[1];
    if (!boundary) return {};
    const fields: Record<string, unknown> = {};
    const uploads = new Map<string, Upload>();
    const delimiter = Buffer.from(`--${boundary}`);
    let at = bytes.indexOf(delimiter);
    while (at >= 0) {
      const start = at + delimiter.length;
      const next = bytes.indexOf(delimiter, start);
      if (next < 0) break;
      // Each part: CRLF, headers, CRLF CRLF, content, CRLF (before the next delimiter).
      const part = bytes.subarray(start + 2, next - 2);
      const split = part.indexOf('\r\n\r\n');
      if (split >= 0) {
        const head = part.subarray(0, split).toString('utf8');
        const content = part.subarray(split + 4);
        // grammY quotes the field name but not the file name.
        const name = /[;\s]name="?([^";\r\n]*)"?/.exec(head)?.[1] ?? '';
        const file = /filename=(?:"([^"]*)"|([^;\r\n]*))/.exec(head);
        const fileName = file ? (file[1] ?? file[2] ?? '') : undefined;
        if (fileName === undefined) fields[name] = content.toString('utf8');
        else uploads.set(name, { fileName, bytes: Buffer.from(content) });
      }
      at = next;
    }
    for (const [k, v] of Object.entries(fields)) {
      const ref = typeof v === 'string' && v.startsWith('attach://') ? uploads.get(v.slice('attach://'.length)) : undefined;
      if (ref) fields[k] = ref;
    }
    for (const [k, v] of uploads) if (!(k in fields)) fields[k] = v;
    return fields;
  }

  function reply(res: ServerResponse, status: number, payload: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }

  async function getUpdates(p: Record<string, unknown>, req: IncomingMessage): Promise<unknown[]> {
    maxPolling = Math.max(maxPolling, ++polling);
    // A poller that died (its connection closed) is no longer polling, though its long poll has not timed out.
    let counted = true;
    const release = (): void => {
      if (counted) polling--;
      counted = false;
    };
    req.socket.once('close', release);
    try {
      return await pollUpdates(p, req);
    } finally {
      req.socket.off('close', release);
      release();
    }
  }

  async function pollUpdates(p: Record<string, unknown>, req: IncomingMessage): Promise<unknown[]> {
    const offset = Number(p.offset ?? 0);
    // Telegram: an offset confirms every update below it; they are never returned again.
    if (offset > confirmed) confirmed = offset;
    for (let i = queue.length - 1; i >= 0; i--) if (queue[i]!.update_id < confirmed) queue.splice(i, 1);
    const limit = Number(p.limit ?? 100);
    const pick = (): unknown[] => queue.filter((u) => u.update_id >= confirmed).slice(0, limit);
    let got = pick();
    const timeoutS = Number(p.timeout ?? 0);
    if (got.length === 0 && timeoutS > 0) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          waiters.delete(done);
          resolve();
        };
        const t = setTimeout(done, timeoutS * 1000);
        waiters.add(done);
        req.on('close', done);
      });
      got = pick();
    }
    return got;
  }

  const text = (p: Record<string, unknown>): string => String(p.text ?? '');
  /** An inline keyboard parameter (JSON body or a form field); an empty keyboard means none. */
  const markup = (p: Record<string, unknown>): SentMessage['replyMarkup'] => {
    const raw = typeof p.reply_markup === 'string' ? (JSON.parse(p.reply_markup) as unknown) : p.reply_markup;
    const kb = raw as SentMessage['replyMarkup'] | undefined;
    return kb && Array.isArray(kb.inline_keyboard) && kb.inline_keyboard.some((row) => row.length > 0) ? kb : undefined;
  };
  const notModified = (): Error =>
    Object.assign(
      new Error(
        'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      ),
      { code: 400 },
    );

  async function handle(method: string, p: Record<string, unknown>, req: IncomingMessage): Promise<unknown> {
    switch (method) {
      case 'getMe':
        return {
          id: Number(token.split(':')[0]),
          is_bot: true,
          first_name: 'aivyx-test',
          username: 'aivyx_test_bot',
          can_join_groups: true,
          can_read_all_group_messages: false,
          supports_inline_queries: false,
        };
      case 'deleteWebhook':
      case 'setWebhook':
      case 'answerCallbackQuery':
      case 'sendChatAction':
        return true;
      case 'getUpdates':
        return getUpdates(p, req);
      case 'sendMessage': {
        const chatId = Number(p.chat_id);
        const messageId = nextMessageId++;
        const kb = markup(p);
        sent.set(`${chatId}:${messageId}`, { chatId, messageId, text: text(p), edits: 0, ...(kb ? { replyMarkup: kb } : {}) });
        return { message_id: messageId, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: 'private' }, text: text(p) };
      }
      case 'sendPhoto':
      case 'sendDocument': {
        const field = method === 'sendPhoto' ? 'photo' : 'document';
        const file = p[field] as Upload | undefined;
        if (!file || !Buffer.isBuffer(file.bytes))
          throw Object.assign(new Error(`Bad Request: there is no ${field} in the request`), { code: 400 });
        const chatId = Number(p.chat_id);
        const messageId = nextMessageId++;
        uploads.push({ method, chatId, messageId, ...file });
        return { message_id: messageId, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: 'private' } };
      }
      case 'editMessageText': {
        const chatId = Number(p.chat_id);
        const key = `${chatId}:${Number(p.message_id)}`;
        const m = sent.get(key);
        if (!m) throw Object.assign(new Error('Bad Request: message to edit not found'), { code: 400 });
        // Like Telegram: an edit without reply_markup removes the inline keyboard.
        const kb = markup(p);
        if (m.text === text(p) && JSON.stringify(m.replyMarkup) === JSON.stringify(kb)) throw notModified();
        m.text = text(p);
        if (kb) m.replyMarkup = kb;
        else delete m.replyMarkup;
        m.edits++;
        return { message_id: m.messageId, date: Math.floor(Date.now() / 1000), chat: { id: chatId, type: 'private' }, text: m.text };
      }
      case 'editMessageReplyMarkup': {
        const m = sent.get(`${Number(p.chat_id)}:${Number(p.message_id)}`);
        if (!m) throw Object.assign(new Error('Bad Request: message to edit not found'), { code: 400 });
        const kb = markup(p);
        if (JSON.stringify(m.replyMarkup) === JSON.stringify(kb)) throw notModified();
        if (kb) m.replyMarkup = kb;
        else delete m.replyMarkup;
        return { message_id: m.messageId, date: Math.floor(Date.now() / 1000), chat: { id: m.chatId, type: 'private' }, text: m.text };
      }
      case 'getFile': {
        const f = files.get(String(p.file_id));
        if (!f) throw Object.assign(new Error('Bad Request: invalid file_id'), { code: 400 });
        return { file_id: p.file_id, file_unique_id: `u${String(p.file_id)}`, file_size: f.bytes.length, file_path: f.path };
      }
      default:
        throw Object.assign(new Error(`Not Found: method ${method} is not emulated`), { code: 404 });
    }
  }

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const fileMatch = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
      if (fileMatch) {
        const f = [...files.values()].find((x) => x.path === decodeURIComponent(fileMatch[2]!));
        if (fileMatch[1] !== token || !f) return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(f.bytes);
        return;
      }
      const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (!m || m[1] !== token) return reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
      const method = m[2]!;
      const params = await body(req);
      const matching = matchingFaults.findIndex((f) => f.method === method && f.match(params));
      const fault = matching >= 0 ? matchingFaults.splice(matching, 1)[0]!.fault : faults.get(method)?.shift();
      if (fault) {
        calls.push({ method, params, status: fault.status, at: Date.now() });
        if (fault.status === 429) {
          return reply(res, 429, {
            ok: false,
            error_code: 429,
            description: `Too Many Requests: retry after ${fault.retryAfter}`,
            parameters: { retry_after: fault.retryAfter },
          });
        }
        return reply(res, fault.status, {
          ok: false,
          error_code: fault.status,
          description: fault.status === 400 || fault.status === 403 ? fault.description : 'Internal Server Error',
        });
      }
      try {
        const result = await handle(method, params, req);
        calls.push({ method, params, status: 200, at: Date.now() });
        if (!res.destroyed) reply(res, 200, { ok: true, result });
      } catch (err) {
        const code = (err as { code?: number }).code ?? 500;
        calls.push({ method, params, status: code, at: Date.now() });
        reply(res, code, { ok: false, error_code: code, description: (err as Error).message });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const emulator: BotApiEmulator = {
    apiRoot: `http://127.0.0.1:${port}`,
    token,
    calls,
    sent,
    uploads,
    pushUpdate(update) {
      const u = { ...update, update_id: typeof update.update_id === 'number' ? update.update_id : nextUpdateId++ };
      queue.push(u);
      queue.sort((a, b) => a.update_id - b.update_id);
      wake();
      return u;
    },
    textUpdate(user, t, chat) {
      return emulator.pushUpdate({
        message: {
          message_id: nextMessageId++,
          date: Math.floor(Date.now() / 1000),
          from: { is_bot: false, first_name: 'user', ...user },
          chat: chat ?? { id: user.id, type: 'private', first_name: user.first_name ?? 'user' },
          text: t,
          ...(t.startsWith('/') ? { entities: [{ type: 'bot_command', offset: 0, length: t.split(/\s/)[0]!.length }] } : {}),
        },
      });
    },
    pressButton(user, message, data, chatType = 'private') {
      return emulator.pushUpdate({
        callback_query: {
          id: `cb-${nextCallbackId++}`,
          from: { is_bot: false, first_name: 'user', ...user },
          chat_instance: `ci-${message.chatId}`,
          data,
          message: {
            message_id: message.messageId,
            date: Math.floor(Date.now() / 1000),
            chat: { id: message.chatId, type: chatType, ...(chatType === 'private' ? { first_name: 'user' } : { title: 'a group' }) },
            text: message.text,
          },
        },
      });
    },
    answersTo: (id) =>
      calls
        .filter((c) => c.method === 'answerCallbackQuery' && c.status === 200 && c.params.callback_query_id === id)
        .map((c) => String(c.params.text ?? '')),
    addFile(bytes, filePath) {
      const id = `file-${nextFileId++}`;
      files.set(id, { bytes, path: filePath });
      return id;
    },
    failMatching(method, match, fault, count = 1) {
      for (let i = 0; i < count; i++) matchingFaults.push({ method, match, fault });
    },
    failNext(method, fault, count = 1) {
      const list = faults.get(method) ?? [];
      for (let i = 0; i < count; i++) list.push(fault);
      faults.set(method, list);
    },
    ok: (method) => calls.filter((c) => c.method === method && c.status === 200),
    confirmedOffset: () => confirmed,
    maxConcurrentPolls: () => maxPolling,
    async waitFor(pred, timeoutMs = 30_000, what = 'condition') {
      const until = Date.now() + timeoutMs;
      while (!pred()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      wake();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return emulator;
}

/** What the bot sent to `chatId`, oldest first. */
export const messagesTo = (tg: BotApiEmulator, chatId: number): SentMessage[] => [...tg.sent.values()].filter((m) => m.chatId === chatId);

/** Sends `text` as `user` (in `chat`, default their private chat) and returns the bot's first reply there. */
export async function replyTo(tg: BotApiEmulator, user: TgUser, text: string, chat?: { id: number; type: 'group' }): Promise<string> {
  const chatId = chat?.id ?? user.id;
  const before = messagesTo(tg, chatId).length;
  tg.textUpdate(user, text, chat);
  await tg.waitFor(() => messagesTo(tg, chatId).length > before, 20_000, `reply to ${text.split('\n')[0]}`);
  return messagesTo(tg, chatId)[before]!.text;
}

/** Channel options every emulator-backed test uses: long polling that returns within a second, no send throttle, quiet. */
export const QUICK_POLLING = { mode: 'polling', pollTimeoutSeconds: 1, throttle: false, log: () => undefined } as const;
