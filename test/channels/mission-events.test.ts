/**
 * Offering inbound messages to missions' waits (channels/kit/mission-events.ts) over stub ports:
 * words alone are taken only from a sender who is not Untrusted; a signed mail older than the wait
 * (kept and resent) is not its reply; a message once decided for a mission is never a turn later;
 * Temporal unreachable leaves the message unhandled (thrown) rather than turning it into a turn.
 */
import { describe, expect, it } from 'vitest';
import type { MissionWait, MissionWaitsPort } from '../../activities/ports.js';
import { offerMissionEvent, type MissionEventDeps } from '../../channels/kit/mission-events.js';
import { createAttestor } from '../../infra/attestation.js';
import type { DomainHandle } from '../../infra/storage/index.js';

function deps(waits: MissionWait[], update: () => Promise<unknown> = async () => ({ accepted: true })) {
  const store = new Map<string, unknown>();
  const sent: string[] = [];
  const d: MissionEventDeps = {
    client: {
      workflow: {
        getHandle: (id: string) => ({ executeUpdate: async () => (sent.push(id), update()) }),
      },
    } as never,
    attestor: createAttestor(new Uint8Array(32).fill(1)),
    waits: { open: async () => undefined, close: async () => undefined, list: async () => waits } satisfies MissionWaitsPort,
    store: {
      getJson: async (k: string) => store.get(k),
      putJson: async (k: string, v: unknown) => void store.set(k, v),
      delete: async (k: string) => store.delete(k),
    } as unknown as DomainHandle,
  };
  return { d, sent, store };
}

const now = Date.now();
const wait = (over: Partial<MissionWait>): MissionWait => ({
  waitKey: 'mission-a/wait-0',
  missionId: 'mission-a',
  step: 0,
  match: { source: 'telegram', contains: 'paid' },
  until: now + 3_600_000,
  since: now - 1000,
  ...over,
});

describe('offerMissionEvent', () => {
  it('words alone: taken from a known sender, not from an Untrusted stranger', async () => {
    const { d, sent } = deps([wait({})]);
    const stranger = { source: 'telegram' as const, from: '666', tier: 'Untrusted' };
    expect(await offerMissionEvent(d, { facts: stranger, eventId: 'e1', text: 'I paid' })).toEqual([]);
    expect(sent).toEqual([]);
    expect(await offerMissionEvent(d, { facts: { ...stranger, from: '42', tier: 'Trusted' }, eventId: 'e2', text: 'I paid' })).toEqual([
      'mission-a',
    ]);
  });

  it('a signed mail sent before the wait opened (kept and resent) is not its reply', async () => {
    const { d, sent } = deps([wait({ match: { source: 'email', from: 'bob@example.com' } })]);
    const facts = { source: 'email' as const, from: 'bob@example.com' };
    expect(await offerMissionEvent(d, { facts, eventId: 'old', sentAt: now - 86_400_000 })).toEqual([]);
    expect(await offerMissionEvent(d, { facts, eventId: 'new', sentAt: now })).toEqual(['mission-a']);
    expect(sent).toEqual(['mission-a']);
  });

  it('a message decided for a mission stays the mission’s when it comes again; Temporal unreachable throws', async () => {
    const open = [wait({})];
    const { d } = deps(open);
    const facts = { source: 'telegram' as const, from: '42', tier: 'Trusted' };
    expect(await offerMissionEvent(d, { facts, eventId: 'e1', text: 'paid' })).toEqual(['mission-a']);
    open.length = 0; // the wait has closed
    // Delivered again: still the mission's (no turn); a new message is an ordinary one.
    expect(await offerMissionEvent(d, { facts, eventId: 'e1', text: 'paid' })).toEqual(['mission-a']);
    expect(await offerMissionEvent(d, { facts, eventId: 'e2', text: 'paid' })).toEqual([]);

    const down = deps([wait({})], async () => {
      throw Object.assign(new Error('14 UNAVAILABLE: frontend gone'), { code: 14, details: 'frontend gone', metadata: {} });
    });
    await expect(offerMissionEvent(down.d, { facts, eventId: 'e9', text: 'paid' })).rejects.toThrow(/UNAVAILABLE/);
  });
});
