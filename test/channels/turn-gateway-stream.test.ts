/**
 * A channel keeps hearing a turn's stream while Temporal does not answer about the turn. The wait for
 * the outcome can fail (the frontend unreachable, or too slow on a loaded machine) while the turn's
 * steps run on: the REST channel then asks again for the outcome, and the words streamed meanwhile must
 * still reach it. (Found while chasing silent turns in the scale-out test; those turned out to be
 * messages sent twice, but this gap was real.) The Temporal client is a stub here (what it answers is the point); the hub is the real one.
 */
import type { Client } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { TurnGateway } from '../../channels/turn-gateway.js';
import type { ChannelEvent } from '../../core/channel.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { createAttestor } from '../../infra/attestation.js';
import { StreamHub } from '../../infra/stream-hub.js';

const done: TurnOutcome = { status: 'Completed', finalMessage: 'done', toolCallsMade: 0, durationMs: 1 };

/** A client whose first wait for the outcome fails as an unreachable frontend does; the next ones wait for `ended`. */
function flakyClient(ended: Promise<void>): Client {
  let waits = 0;
  const unavailable = Object.assign(new Error('14 UNAVAILABLE: connection refused'), {
    code: 14,
    details: 'connection refused',
    metadata: {},
  });
  return {
    workflow: {
      getHandle: () => ({
        describe: async () => ({ status: { name: 'RUNNING' } }),
        result: async () => {
          if (waits++ === 0) throw unavailable;
          await ended;
          return done;
        },
      }),
    },
  } as unknown as Client;
}

describe('TurnGateway', () => {
  it('keeps relaying a turn’s stream after a wait for its outcome went unanswered, and stops once the turn ended', async () => {
    let end!: () => void;
    const ended = new Promise<void>((r) => (end = r));
    const hub = new StreamHub();
    const gateway = new TurnGateway({ client: flakyClient(ended), taskQueue: 'q', attestor: createAttestor(new Uint8Array(32)), hub });
    const heard: ChannelEvent[] = [];
    const turn = 'turn/rest/t1';
    const followed = await gateway.follow(turn, (e) => heard.push(e));
    await expect(followed.outcome).rejects.toThrow(/UNAVAILABLE/);

    // The turn streams on while the channel asks again.
    hub.publish(turn, { type: 'text', text: 'still here' });
    expect(heard).toEqual([{ type: 'text', text: 'still here' }]);
    const again = gateway.outcome(turn);
    end();
    expect(await again).toEqual(done);

    // Ended: the listening stops (within the retry interval).
    for (let i = 0; i < 40 && hub.has(turn); i++) await new Promise((r) => setTimeout(r, 50));
    expect(hub.has(turn)).toBe(false);
  });
});
