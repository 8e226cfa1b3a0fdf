/**
 * The index of missions' open waits (`waitFor` steps), sealed in the `channel_state` domain: the
 * worker writes a row when a wait opens and deletes it when it ends; channel adapters scan the rows
 * of their source for each inbound message. The row decides nothing — the worker re-checks every
 * event it is sent against the mission's verified definition.
 */
import { createHash } from 'node:crypto';
import type { MissionWait, MissionWaitsPort } from '../activities/ports.js';
import type { DomainHandle } from './storage/index.js';

const PREFIX = 'mission-waits/';
const keyOf = (source: string, waitKey: string) => `${PREFIX}${source}/${createHash('sha256').update(waitKey).digest('hex').slice(0, 32)}`;

/** A `MissionWaitsPort` over a sealed domain (the channels' `channel_state`). */
export function createMissionWaits(state: DomainHandle): MissionWaitsPort {
  return {
    async open(wait) {
      await state.putJson(keyOf(wait.match.source, wait.waitKey), wait);
    },
    async close(waitKey) {
      for (const source of ['email', 'telegram', 'matrix'] as const) await state.delete(keyOf(source, waitKey));
    },
    async list(source) {
      const out: MissionWait[] = [];
      for await (const { value } of state.scan(`${PREFIX}${source}/`)) out.push(JSON.parse(new TextDecoder().decode(value)) as MissionWait);
      return out;
    },
  };
}
