/**
 * `channel.send`: sends one message on a configured channel through a narrow port. Keyed: the
 * port is called with the call's idempotency key (`workflowId/runId/activityId`, the same on every
 * attempt), and the channel's deliverer keeps an outbox keyed by it, so a retried activity after a
 * crash sends once. The worker wires the port to the channels' `DeliveryRegistry`
 * ({@link channelSenderFromRegistry}).
 */
import { toolErrorFor } from '../../core/tools/tool-error.js';
import { AivyxError } from '../../core/errors.js';
import { channelSendTool } from '../../core/tools/channel-send.js';
import type { DeliveryRegistry } from '../delivery-activities.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** Sends on a named channel; idempotent per `idemKey`. Throws AivyxError for an unknown channel or a failed send. */
export interface ChannelSender {
  send(channel: string, to: string, text: string, idemKey: string): Promise<void>;
}

/** Output of `channel.send` (the text is not echoed back). */
export interface ChannelSendOutput {
  channel: string;
  to: string;
  sent: true;
  chars: number;
}

const TOOL = 'channel.send';

const toolError = toolErrorFor(TOOL);

/**
 * The port over the channels' delivery registry: the channel's deliverer must exist on this
 * worker and implement `send`. Looked up per call, since channels register after the worker starts.
 */
export function channelSenderFromRegistry(registry: DeliveryRegistry): ChannelSender {
  return {
    async send(channel, to, text, idemKey) {
      const deliverer = registry.get(channel);
      if (!deliverer) {
        throw toolError(`channel.send: no channel named "${channel}" is configured on this worker`, {
          hint: 'use the name of a configured channel (e.g. telegram, email)',
          detail: { channel },
        });
      }
      if (!deliverer.send) {
        throw toolError(`channel.send: channel "${channel}" cannot send messages to other recipients`, {
          hint: 'this channel only replies where a message came from',
          detail: { channel },
        });
      }
      await deliverer.send(to, text, idemKey);
    },
  };
}

/** Creates the `channel.send` implementation over a sender port. */
export function createChannelSendTool(deps: { sender: ChannelSender }): ToolImplementation {
  return implementTool(channelSendTool, {
    // A channel name has no other form: the scope is the validated name.
    async run(req, ctx) {
      ctx.signal.throwIfAborted();
      try {
        await deps.sender.send(req.channel, req.to, req.text, ctx.idemKey);
      } catch (e) {
        if (e instanceof AivyxError) throw e;
        throw toolError(`channel.send: sending on "${req.channel}" failed: ${e instanceof Error ? e.message : String(e)}`, {
          cause: e,
          detail: { channel: req.channel },
        });
      }
      const output: ChannelSendOutput = { channel: req.channel, to: req.to, sent: true, chars: req.text.length };
      // The channel accepted the message; that it reached the person is not something we can read back.
      return { kind: 'completed', output, verified: 'Unverified' };
    },
  });
}
