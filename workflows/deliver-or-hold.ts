/**
 * A reply or notice on its way to a person's channel: delivered through the channel's deliverer,
 * or — when delivery gave up (the chat is gone, the channel is not running) — kept in the owner's
 * inbox (`aivyx inbox`), so nothing a person should read is lost. Shared by turns (their final
 * reply) and missions (their `notify` steps). Never cancelled half-way: a cancel does not unsay.
 */
import { ACTIVITY_POLICIES } from '../core/activity-policies.js';
import { CancellationScope, proxyActivities, setCurrentDetails } from '@temporalio/workflow';
import type { DeliveryActivities, ReplyToDeliver } from '../activities/delivery-activities.js';
import { failureToErrorData } from './failures.js';

const delivery = proxyActivities<DeliveryActivities>(ACTIVITY_POLICIES.delivery);

/** How a reply ended up. */
export type DeliveryResult = 'delivered' | 'held' | 'lost';

/** Delivers `reply` on its route; on a final failure holds it unless `hold()` says this run predates holding. */
export async function deliverOrHold(reply: ReplyToDeliver, hold: () => boolean = () => true): Promise<DeliveryResult> {
  try {
    await CancellationScope.nonCancellable(() => delivery.deliverReply(reply));
    return 'delivered';
  } catch (err) {
    setCurrentDetails(`**Reply not delivered** on ${reply.channel.name}: kept in the owner's inbox (aivyx inbox)`);
    if (!hold()) return 'lost';
    return holdInInbox(reply, failureToErrorData(err).message);
  }
}

/** Keeps `reply` in the owner's inbox with `reason` (a reply with no route goes straight here). */
export async function holdInInbox(
  reply: Omit<ReplyToDeliver, 'route'> & { route?: ReplyToDeliver['route'] },
  reason: string,
): Promise<DeliveryResult> {
  try {
    await CancellationScope.nonCancellable(() => delivery.holdUndelivered({ ...reply, route: reply.route ?? {}, at: Date.now(), reason }));
    return 'held';
  } catch {
    setCurrentDetails(`**Reply not delivered** on ${reply.channel.name}, and not kept either (see the holdUndelivered activity)`);
    return 'lost';
  }
}
