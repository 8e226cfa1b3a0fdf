/**
 * Inbound events for missions' `waitFor` steps, the same on every channel: the adapter says what it
 * authenticated about a message (the sender as the platform verified them, the thread it replies to)
 * and gives its text; every open wait of that source it satisfies is sent the event as an Update,
 * signed here (purpose `mission-event`, bound to the mission, the wait and these facts). The worker
 * re-checks the facts against the mission's verified step; the text never leaves the channel.
 *
 * A message some mission took is the mission's: the channel starts no turn for it. That is decided
 * once per message (a durable record), so a message fetched or delivered again is not turned into a
 * turn after its mission took it.
 */
import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { MissionWait, MissionWaitsPort } from '../../activities/ports.js';
import type { MissionEventProofBody } from '../../core/authority.js';
import type { Attestor } from '../../infra/attestation.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { isTemporalUnreachable, isWorkflowNotFound } from '../../infra/temporal/client-errors.js';
import { eventMatches, type MissionEventFacts } from '../../machines/index.js';
import { missionEventUpdate, type MissionEventRequest } from '../../workflows/mission-messages.js';

/** What offering events needs: the client, the key that vouches for the adapter, the waits index and durable state. */
export interface MissionEventDeps {
  client: Client;
  attestor: Pick<Attestor, 'seal'>;
  waits: MissionWaitsPort;
  /** The channels' `channel_state` (one record per message that matched a wait). */
  store: DomainHandle;
  log?: (line: string) => void;
}

/** One inbound message as its adapter authenticated it. */
export interface InboundEvent {
  facts: MissionEventFacts;
  /** The message's own id on its channel (stable when it is fetched or delivered again). */
  eventId: string;
  /** Its text (Telegram `contains`); checked here, never sent on. */
  text?: string;
  /** When its sender says it was sent (a signed Date header): a message older than the wait is not its event. */
  sentAt?: number;
}

/** How far a sender's clock may run behind ours. */
const CLOCK_SKEW_MS = 5 * 60_000;

const digest = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 32);
const recordKey = (eventId: string) => `mission-events/${digest(eventId)}`;

/** Offers `event` to every open wait it satisfies; returns the missions that are its (empty: the channel handles it as usual). */
export async function offerMissionEvent(deps: MissionEventDeps, event: InboundEvent): Promise<string[]> {
  const key = recordKey(event.eventId);
  // `waits` since Matrix: older records name only missions (a replay could then reach a later wait of the same mission).
  const earlier = await deps.store.getJson<{ missions: string[]; waits?: string[] }>(key);
  const open = (await deps.waits.list(event.facts.source)).filter(
    (w) =>
      w.until > Date.now() &&
      // An old message resent (a signed mail kept and replayed) is not the reply a wait is for.
      (event.sentAt === undefined || w.since === undefined || event.sentAt >= w.since - CLOCK_SKEW_MS) &&
      eventMatches(w.match, event.facts, event.text),
  );
  // Seen before: offered again only to the waits it was decided for (one that already took it refuses it),
  // never to a later wait of the same mission — a replayed message ends one wait, once.
  const decidedFor = (w: MissionWait) => (earlier?.waits ? earlier.waits.includes(w.waitKey) : earlier?.missions.includes(w.missionId));
  const matching = earlier ? open.filter(decidedFor) : open;
  if (!earlier && matching.length === 0) return [];
  // Decided before anything is sent: a crash after a wait took the event must not make it a turn later.
  if (!earlier) await deps.store.putJson(key, { missions: matching.map((w) => w.missionId), waits: matching.map((w) => w.waitKey) });
  const taken: string[] = [];
  for (const w of matching) {
    const facts: MissionEventFacts = {
      ...event.facts,
      // The words the step waits for, found in the text here (the worker cannot look: it never gets the text).
      ...((w.match.source === 'telegram' || w.match.source === 'matrix') && w.match.contains !== undefined
        ? { contains: w.match.contains }
        : {}),
    };
    const body: MissionEventProofBody = { waitKey: w.waitKey, eventId: event.eventId, facts };
    const request: MissionEventRequest = {
      waitKey: w.waitKey,
      eventId: event.eventId,
      facts,
      proof: deps.attestor.seal('mission-event', w.missionId, body),
    };
    try {
      // One update id per wait and event: a retried offer (after an outage) is the same update, not a second one.
      await deps.client.workflow
        .getHandle(w.missionId)
        .executeUpdate(missionEventUpdate, { args: [request], updateId: `event-${digest(`${w.waitKey}\n${event.eventId}`)}` });
      taken.push(w.missionId);
    } catch (err) {
      // Temporal unreachable: the message stays unhandled and the channel reads it again later (never a turn meanwhile).
      if (isTemporalUnreachable(err)) throw err;
      // A mission that ended leaves a stale row: drop it. A refusal (the wait just closed) leaves the message to the channel.
      if (isWorkflowNotFound(err)) await deps.waits.close(w.waitKey).catch(() => undefined);
      deps.log?.(`mission ${w.missionId} did not take event ${event.eventId}: ${(err as Error).message}`);
    }
  }
  if (earlier) return earlier.missions;
  // Nothing took it after all (every wait had just ended): the channel handles it as usual.
  if (taken.length === 0) await deps.store.delete(key);
  return taken;
}
