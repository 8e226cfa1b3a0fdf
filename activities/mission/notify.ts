/**
 * Telling people: a gate's approvers (through the notifier, deduplicated by it) and the people a
 * notify step names (through their channels' outboxes, once per recipient).
 */
import { CapabilitySet } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import type { MissionDefinition } from '../../workflows/mission-messages.js';
import { activityKey } from '../execution.js';
import { toApplicationFailure } from '../failure.js';
import type { MissionContext } from './context.js';
import type { MissionNotice } from './notice.js';

/** The activities that send a mission's notices. */
export function notifyActivities({ deps, reachable }: MissionContext) {
  return {
    /**
     * Sends step `step`'s notice to the people it names (a notify step with `to`), each on their
     * channel — only where the verified definition's capabilities grant `channel.send:<channel>`,
     * as the `channel.send` tool would need. Once per recipient (the channel's outbox, keyed here).
     */
    async sendMissionNotice(input: { definition: MissionDefinition; step: number }): Promise<void> {
      const def = input.definition;
      await reachable(def, input.step);
      const step = def.steps[input.step];
      if (step?.kind !== 'notify' || !step.to)
        throw toApplicationFailure(new AivyxError('Internal', `mission ${def.missionId} has no notice to people at step ${input.step}`));
      const held = CapabilitySet.from(def.capabilities);
      const denied = step.to.find((r) => !held.grants(`channel.send:${r.channel}`));
      if (denied)
        throw toApplicationFailure(
          new AivyxError('CapabilityDenied', `mission ${def.missionId} may not send on ${denied.channel}`, {
            hint: `a notice to ${denied.channel}:… needs channel.send:${denied.channel} in the mission's capabilities`,
          }),
        );
      if (!deps.sender) throw toApplicationFailure(new AivyxError('Channel', 'this worker cannot send notices to other people'));
      const key = activityKey();
      for (const [i, r] of step.to.entries()) {
        try {
          await deps.sender.send(r.channel, r.to, step.text, `${key}/${i}`);
        } catch (e) {
          throw toApplicationFailure(e);
        }
      }
    },

    /** Tells a gate's approvers (opened, reminder, escalation, withdrawal). */
    async notifyApprovers(notice: MissionNotice): Promise<void> {
      await deps.notifier.notify(notice, activityKey());
    },
  };
}
