/**
 * The in-process bridge every local channel uses: submit a message, relay its stream events as
 * they arrive, and resolve with the outcome. The stream is best effort; the outcome is not.
 */
import type { ChannelFacts, ReplyRoute } from '../core/channel.js';
import type { Message } from '../core/message.js';
import type { TurnOutcome } from '../core/outcomes.js';
import type { ChannelEvent, StreamHub } from '../infra/stream-hub.js';
import { awaitTurnOutcome, buildTurnRequest, cancelTurn, submitTurn, type TurnClientDeps } from './turn-client.js';

/** A turn started through the gateway. */
export interface GatewayTurn {
  turnWorkflowId: string;
  duplicate: boolean;
  outcome: Promise<TurnOutcome>;
}

/** Submits turns and relays their events to a listener. */
export class TurnGateway {
  constructor(
    private readonly deps: TurnClientDeps & { hub: StreamHub },
  ) {}

  /**
   * Starts a turn for `message`; `onEvent` hears stream events until the outcome. With a
   * `replyRoute` the turn itself delivers the final reply through the channel's deliverer.
   */
  async start(channel: ChannelFacts, message: Message, onEvent: (e: ChannelEvent) => void, replyRoute?: ReplyRoute): Promise<GatewayTurn> {
    const request = buildTurnRequest(channel, message, replyRoute);
    // Subscribe before submitting so the first streamed words are not missed.
    const stop = this.deps.hub.subscribe(request.turnId, (e) => {
      if (e.type !== 'final') onEvent(e);
    });
    try {
      const submitted = await submitTurn(this.deps, request);
      const outcome = awaitTurnOutcome(this.deps.client, submitted.turnWorkflowId).finally(stop);
      return { ...submitted, outcome };
    } catch (err) {
      stop();
      throw err;
    }
  }

  /** Cancels a running turn. */
  cancel(turnWorkflowId: string): Promise<void> {
    return cancelTurn(this.deps.client, turnWorkflowId);
  }
}
