/**
 * A step's streamed words go out before the step returns. The turn's outcome follows the step's result
 * through Temporal, and a channel stops listening at the outcome: a step that returned with its words
 * still queued on the way to the gateway (the PostgreSQL bus publishes in the background) lost them to
 * the channel whenever the rest of the turn was quicker than the queue (likelier since finalizing
 * became local). A worker killed before they went out has not completed the step, so a retry streams
 * them again.
 */
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import { wireTurnActivities } from '../../app/wiring.js';
import type { ChannelEvent } from '../../core/channel.js';
import { openDatabase, type OpenDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { StreamHub } from '../../infra/stream-hub.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

let database: { url: string; drop(): Promise<void> };
let opened: OpenDatabase;
beforeAll(async () => {
  database = await createTestDatabase('aivyx_stream_step');
  opened = await openDatabase({ databaseUrl: database.url });
});
afterAll(async () => {
  await opened?.close();
  await database?.drop();
});

/** A bus whose events are "on their way" until `release()`. */
class SlowBus extends StreamHub {
  readonly sent: ChannelEvent[] = [];
  private queued: ChannelEvent[] = [];
  private released!: () => void;
  private readonly out = new Promise<void>((r) => (this.released = r));
  private flushing!: () => void;
  /** Resolves when someone waits for the events to go out. */
  readonly awaited = new Promise<void>((r) => (this.flushing = r));
  override publish(_turnId: string, event: ChannelEvent): void {
    this.queued.push(event);
  }
  override flush(): Promise<void> {
    this.flushing();
    return this.out;
  }
  release(): void {
    this.sent.push(...this.queued);
    this.queued = [];
    this.released();
  }
}

describe('llmStep and the stream', () => {
  it('returns only once what it streamed has gone out', async () => {
    const master = await openKeyring(opened.db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
    const llm: LlmProvider = {
      name: 'scripted',
      async step(_req, sink) {
        sink?.text?.('hello ');
        sink?.text?.('there');
        return { type: 'final', text: 'hello there', usage: { inputTokens: 1, outputTokens: 2 } };
      },
    };
    const bus = new SlowBus();
    const activities = wireTurnActivities({
      db: opened.db,
      master,
      hub: bus,
      llm,
      agent: { capabilities: ['llm.call'], budgetMs: 60_000, confirmFirst: [] },
    });
    const step = new MockActivityEnvironment().run(activities.llmStep, {
      turnId: 'turn/stream',
      step: 0,
      sessionKey: 'session/stream',
      message: { id: 'm', sessionId: 's', content: [{ type: 'text' as const, text: 'hi' }], receivedAt: Date.now() },
      transcript: [],
      tools: [],
    });
    // Either the step returns with its words still queued, or it waits for them.
    const first = await Promise.race([step.then(() => 'returned'), bus.awaited.then(() => 'waits')]);
    expect(first).toBe('waits');
    // ... and it is still waiting a while later (a flush called but not awaited would have returned by now).
    const later = await Promise.race([step.then(() => 'returned'), new Promise((r) => setTimeout(() => r('waits'), 300))]);
    expect(later).toBe('waits');
    expect(bus.sent).toEqual([]);
    bus.release();
    expect(await step).toMatchObject({ type: 'final', text: 'hello there' });
    expect(bus.sent).toEqual([
      { type: 'text', text: 'hello ' },
      { type: 'text', text: 'there' },
    ]);
  });
});
