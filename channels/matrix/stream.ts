/**
 * A turn's streamed view in Matrix: the first text sends one notice replying to the request, later
 * text replaces it (`m.replace`), at most once per `editInterval`. The deliverer closes it before
 * the final edit; a deliverer in another process marks the turn record `final`, read before each edit.
 */
import type { ChannelEvent } from '../../core/channel.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { toolSummaryText } from '../outcome-text.js';
import type { MatrixClient } from './client.js';
import { streamView } from './render.js';
import { turnKey, type MatrixTurnRecord } from './state.js';

/** A turn's streamed view, owned by the adapter until the deliverer closes it. */
export interface LiveStream {
  onEvent(e: ChannelEvent): void;
  /** No more edits; resolves once an edit in flight has finished. */
  close(): Promise<void>;
}

/** What a streamed view needs. */
export interface StreamDeps {
  client: MatrixClient;
  store: DomainHandle;
  editInterval: number;
  isStopped(): boolean;
  log(line: string): void;
}

/** Folds one stream event into the view's text and status lines; false when it changes nothing shown. */
function fold(view: { text: string; status: string[] }, e: ChannelEvent): boolean {
  if (e.type === 'text') view.text += e.text;
  else if (e.type === 'step_restarted') view.text = '';
  else if (e.type === 'status') view.status.push(`· ${e.text}`);
  else if (e.type === 'tool_started') view.status.push(`⚙ ${e.tool}…`);
  else if (e.type === 'tool_finished') view.status.push(`⚙ ${e.tool}: ${toolSummaryText(e.summary)}`);
  else return false;
  return true;
}

export function liveStream(deps: StreamDeps, turnId: string, rec: MatrixTurnRecord): LiveStream {
  const view = { text: '', status: [] as string[] };
  let shown = '';
  let edits = 0;
  let lastEdit = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<void> = Promise.resolve();

  async function show(): Promise<void> {
    const text = streamView(view.text, view.status);
    if (deps.isStopped() || closed || text === shown) return;
    const latest = await deps.store.getJson<MatrixTurnRecord>(turnKey(turnId));
    if (latest?.final || latest?.delivered) {
      closed = true;
      return;
    }
    if (latest?.streamEventId !== undefined) rec.streamEventId = latest.streamEventId;
    shown = text;
    lastEdit = Date.now();
    if (rec.streamEventId === undefined) {
      const eventId = await deps.client.sendText(rec.roomId, text, `${turnId}/stream`, rec.replyTo);
      rec.streamEventId = eventId;
      const stored = await deps.store.getJson<MatrixTurnRecord>(turnKey(turnId));
      await deps.store.putJson(turnKey(turnId), { ...(stored ?? rec), streamEventId: eventId });
    } else {
      await deps.client.editText(rec.roomId, rec.streamEventId, text, `${turnId}/stream/${lastEdit}/${++edits}`);
    }
  }

  const flush = (): void => {
    timer = undefined;
    chain = chain.then(show).catch((err: unknown) => deps.log(`streaming ${turnId}: ${(err as Error).message}`));
  };
  return {
    onEvent(e) {
      if (closed || !fold(view, e) || timer !== undefined || deps.isStopped()) return;
      timer = setTimeout(flush, Math.max(0, lastEdit + deps.editInterval - Date.now()));
    },
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      await chain;
    },
  };
}
