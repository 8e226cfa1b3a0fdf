/**
 * Delivery to channels that are not in this process's stream hub: a turn's final reply
 * (`deliverReply`, the last activity of a turn whose request carries a `replyRoute`) and gate
 * notices for approvers on a channel (`routingMissionNotifier`). Each channel registers one
 * `ChannelDeliverer`; deliverers are idempotent per `idemKey` (workflow / run / activity id),
 * normally through `infra/outbox.ts`, so a retried activity never sends twice.
 */
import type { ChannelFacts, ReplyRoute } from '../core/channel.js';
import { AivyxError } from '../core/errors.js';
import type { TurnOutcome } from '../core/outcomes.js';
import type { GateApproverRef } from '../machines/index.js';
import { toApplicationFailure } from './failure.js';
import type { HeldReply, InboxPort } from './ports.js';
import type { MissionNotice, MissionNotifier } from './mission/notice.js';
import { activityKey } from './execution.js';
import { loadTurnAttachments, type AttachmentSource, type LoadedAttachment } from './tools/attachment-port.js';

/** A turn's final reply on its way to the channel it came from. */
export interface ReplyToDeliver {
  turnId: string;
  channel: ChannelFacts;
  /** The inbound message the reply answers. */
  messageId: string;
  route: ReplyRoute;
  outcome: TurnOutcome;
  /**
   * The files the turn handed over (`fs.attach`), read by the delivery activity from the sealed
   * store for this channel and session only: the workflow carries no bytes.
   */
  attachments?: LoadedAttachment[];
}

/** One channel's outbound side. Both methods must be idempotent per `idemKey`. */
export interface ChannelDeliverer {
  deliverReply?(reply: ReplyToDeliver, idemKey: string): Promise<void>;
  /** Tells `approvers` (all on this channel) about a gate. */
  notifyGate?(notice: MissionNotice, approvers: GateApproverRef[], idemKey: string): Promise<void>;
  /**
   * Sends `text` to recipient `to` (the channel's own address form: chat id, email address) for the
   * `channel.send` tool. Idempotent per `idemKey` (the tool call's activity key) through the outbox;
   * throws AivyxError (e.g. `Channel`) when `to` is not valid on this channel or the send fails.
   */
  send?(to: string, text: string, idemKey: string): Promise<void>;
}

/** Channel name → deliverer. Channels register when they start (after the worker may already run). */
export class DeliveryRegistry {
  private readonly byName = new Map<string, ChannelDeliverer>();

  /** Registers `deliverer` for channel `name`; returns a function that unregisters it. */
  register(name: string, deliverer: ChannelDeliverer): () => void {
    this.byName.set(name, deliverer);
    return () => {
      if (this.byName.get(name) === deliverer) this.byName.delete(name);
    };
  }

  get(name: string): ChannelDeliverer | undefined {
    return this.byName.get(name);
  }
}

/** The delivery activities; `inbox` keeps what could not be delivered (none: such a reply is only reported). */
export function createDeliveryActivities(registry: DeliveryRegistry, inbox?: InboxPort, attachments?: AttachmentSource) {
  return {
    /** Delivers a turn's final reply through its channel's deliverer, once per activity. */
    async deliverReply(reply: ReplyToDeliver): Promise<void> {
      const deliverer = registry.get(reply.channel.name)?.deliverReply;
      if (!deliverer) {
        // Retryable: the channel may be starting on this worker; the workflow's retry policy bounds it.
        throw toApplicationFailure(
          new AivyxError('Channel', `no deliverer for channel "${reply.channel.name}" on this worker`, {
            hint: 'start the channel on the worker that runs turns',
          }),
        );
      }
      try {
        const files =
          attachments && reply.outcome.status === 'Completed'
            ? await loadTurnAttachments(attachments, reply.turnId, { channel: reply.channel.name, sessionId: reply.channel.sessionId })
            : [];
        await deliverer(files.length > 0 ? { ...reply, attachments: files } : reply, activityKey());
      } catch (err) {
        // A deliverer may say a failure is final (`detail.retryable: false`): the turn then keeps the reply.
        throw toApplicationFailure(err);
      }
    },

    /** Keeps a reply that `deliverReply` gave up on in the owner's inbox (idempotent per turn). */
    async holdUndelivered(reply: ReplyToDeliver & { at: number; reason: string }): Promise<HeldReply | undefined> {
      return inbox?.hold({ turnId: reply.turnId, at: reply.at, channel: reply.channel.name, reason: reply.reason, outcome: reply.outcome });
    },
  };
}

/** The activity object a worker registers for reply delivery. */
export type DeliveryActivities = ReturnType<typeof createDeliveryActivities>;

/**
 * A notifier that always publishes on `fallback` (the stream hub: local channels) and also hands
 * each channel's approvers to that channel's deliverer, under `<idemKey>/<channel>`.
 */
export function routingMissionNotifier(registry: DeliveryRegistry, fallback: MissionNotifier): MissionNotifier {
  return {
    async notify(notice, idemKey) {
      await fallback.notify(notice, idemKey);
      const byChannel = new Map<string, GateApproverRef[]>();
      for (const a of notice.approvers) byChannel.set(a.channel, [...(byChannel.get(a.channel) ?? []), a]);
      for (const [channel, approvers] of byChannel) {
        const notify = registry.get(channel)?.notifyGate;
        if (notify) await notify(notice, approvers, `${idemKey}/${channel}`);
      }
    },
  };
}
