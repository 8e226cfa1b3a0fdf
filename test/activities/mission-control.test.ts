/**
 * `mission.list` and `mission.cancel` over a stub control port: the asker is the turn's verified
 * sender (not the model's input), a person sees and cancels only the missions whose definition names
 * them on their channel, another person's mission is answered like one that does not exist (and is
 * not cancelled), a mission that ended is refused, a retried cancel of a cancelled one succeeds, the
 * local Trusted owner sees all, and an Untrusted sender none.
 */
import { describe, expect, it } from 'vitest';
import { listOwnSchedules, setOwnSchedule } from '../../activities/owned-missions.js';
import type { MissionControlPort, MissionRecord, ScheduleControlPort, ScheduleRecord } from '../../activities/ports.js';
import { createMissionControlTools } from '../../activities/tools/mission-control.js';
import type { ToolRunContext } from '../../activities/tools/index.js';
import type { ChannelFacts } from '../../core/channel.js';
import { AivyxError } from '../../core/errors.js';
import { ownsMission } from '../../core/mission-owner.js';

const alice: ChannelFacts = { name: 'telegram', platform: 'Telegram', trustTier: 'SemiTrusted', sessionId: 'tg-42', sender: '42' };
const bob: ChannelFacts = { ...alice, sessionId: 'tg-77', sender: '77' };
const owner: ChannelFacts = { name: 'cli', platform: 'Local', trustTier: 'Trusted', sessionId: 's', sender: 'local-user' };

function ctx(channel: ChannelFacts | undefined): ToolRunContext {
  return {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    idemKey: 'turn/x/run-1/5',
    turnId: 'turn/x',
    held: ['mission.list', 'mission.cancel'],
    ...(channel ? { channel } : {}),
    recordMemoryAccess: async () => undefined,
  };
}

const rec = (missionId: string, sender: string, over: Partial<MissionRecord> = {}): MissionRecord => ({
  missionId,
  goal: `goal of ${missionId}`,
  status: 'RUNNING',
  state: 'waiting',
  startedAt: '2026-12-04T00:00:00.000Z',
  owners: {
    approvers: [
      { identity: sender, channel: 'telegram' },
      { identity: 'local-user', channel: 'cli' },
    ],
    sender: { identity: sender, channel: 'telegram' },
  },
  ...over,
});

/** A port over fixed records that records what it was asked to cancel (and honours `where` like the real one). */
function stubPort(records: MissionRecord[]): MissionControlPort & { cancelled: string[] } {
  const cancelled: string[] = [];
  return {
    cancelled,
    records: async ({ state, limit, where }) => records.filter((r) => (!state || r.state === state) && where(r.owners)).slice(0, limit),
    record: async (id) => records.find((r) => r.missionId === id),
    cancel: async (id) => void cancelled.push(id),
  };
}

const missions = (): MissionRecord[] => [
  rec('mission-a1', '42'),
  rec('mission-a2', '42', { status: 'COMPLETED', state: 'completed' }),
  rec('mission-a3', '42', { status: 'COMPLETED', state: 'cancelled' }),
  rec('mission-b1', '77'),
  // Bob's id on e-mail is "42" too: the same identity on another channel is someone else.
  rec('mission-e1', '42', {
    owners: { approvers: [{ identity: '42', channel: 'email' }], sender: { identity: '42', channel: 'email' } },
  }),
];

function tools(port: MissionControlPort) {
  const [list, cancel] = createMissionControlTools({ control: port });
  return { list: list!, cancel: cancel! };
}

async function refusal(p: Promise<unknown>): Promise<AivyxError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AivyxError);
  return err as AivyxError;
}

describe('mission.list', () => {
  it("lists the asker's own missions only, without their owners", async () => {
    const { list } = tools(stubPort(missions()));
    const out = await list.run({}, ctx(alice));
    expect(out).toMatchObject({ kind: 'completed', verified: 'Verified' });
    const rows = (out as { output: { missions: Record<string, unknown>[] } }).output.missions;
    expect(rows.map((r) => r.missionId)).toEqual(['mission-a1', 'mission-a2', 'mission-a3']);
    expect(rows[0]).toEqual({
      missionId: 'mission-a1',
      goal: 'goal of mission-a1',
      status: 'RUNNING',
      state: 'waiting',
      startedAt: '2026-12-04T00:00:00.000Z',
    });
    const bobs = (await list.run({ state: 'waiting' }, ctx(bob))) as { output: { missions: { missionId: string }[] } };
    expect(bobs.output.missions.map((r) => r.missionId)).toEqual(['mission-b1']);
  });

  it('a listing with a mission drafted after untrusted content carries where that came from; one without, nothing', async () => {
    const page = { taintedBy: ['a page from evil.example'] };
    const { list } = tools(
      stubPort([rec('mission-a1', '42'), rec('mission-a4', '42', { goal: 'lunch with mallory@evil.example', ...page })]),
    );
    const out = await list.run({}, ctx(alice));
    expect(out).toMatchObject({ kind: 'completed', untrusted: 'a page from evil.example' });
    expect((out as { output: { missions: Record<string, unknown>[] } }).output.missions[1]).not.toHaveProperty('taintedBy');
    expect(await list.run({ state: 'waiting' }, ctx(bob))).not.toHaveProperty('untrusted');
    expect(await tools(stubPort([rec('mission-a1', '42')])).list.run({}, ctx(alice))).not.toHaveProperty('untrusted');
  });

  it('the local Trusted owner sees every mission; an Untrusted sender and a turn without a channel none', async () => {
    const { list } = tools(stubPort(missions()));
    const all = (await list.run({ limit: 50 }, ctx(owner))) as { output: { missions: unknown[] } };
    expect(all.output.missions).toHaveLength(5);
    const untrusted = (await list.run({}, ctx({ ...alice, trustTier: 'Untrusted' }))) as { output: { missions: unknown[] } };
    expect(untrusted.output.missions).toEqual([]);
    // A Trusted Telegram chat is not the local owner: it sees its own.
    const trustedTg = (await list.run({}, ctx({ ...alice, trustTier: 'Trusted' }))) as { output: { missions: unknown[] } };
    expect(trustedTg.output.missions).toHaveLength(3);
    expect((await refusal(list.run({}, ctx(undefined)))).message).toMatch(/no verified sender/);
  });

  it('keeps a port that filters wrongly from leaking someone else’s mission', async () => {
    const leaky: MissionControlPort = { ...stubPort(missions()), records: async () => missions() };
    const rows = (await tools(leaky).list.run({}, ctx(bob))) as { output: { missions: { missionId: string }[] } };
    expect(rows.output.missions.map((r) => r.missionId)).toEqual(['mission-b1']);
  });
});

describe('mission.cancel', () => {
  it("cancels the asker's running mission", async () => {
    const port = stubPort(missions());
    const out = await tools(port).cancel.run({ missionId: 'mission-a1', reason: 'done' }, ctx(alice));
    expect(out).toMatchObject({ kind: 'completed', output: { missionId: 'mission-a1', result: 'cancelled' } });
    expect(port.cancelled).toEqual(['mission-a1']);
  });

  it("refuses someone else's mission exactly like a missing one, and cancels nothing", async () => {
    const port = stubPort(missions());
    const { cancel } = tools(port);
    const other = await refusal(cancel.run({ missionId: 'mission-b1' }, ctx(alice)));
    const missing = await refusal(cancel.run({ missionId: 'mission-zz' }, ctx(alice)));
    const otherChannel = await refusal(cancel.run({ missionId: 'mission-e1' }, ctx(alice)));
    for (const e of [other, missing, otherChannel]) expect(e.kind).toBe('NotFound');
    expect(other.message.replace('b1', 'X')).toBe(missing.message.replace('zz', 'X'));
    // Untrusted may not even cancel its "own".
    expect((await refusal(cancel.run({ missionId: 'mission-a1' }, ctx({ ...alice, trustTier: 'Untrusted' })))).kind).toBe('NotFound');
    expect(port.cancelled).toEqual([]);
  });

  it('refuses a mission that ended; a cancelled one is "already cancelled" (a retried call)', async () => {
    const port = stubPort(missions());
    const { cancel } = tools(port);
    const ended = await refusal(cancel.run({ missionId: 'mission-a2' }, ctx(alice)));
    expect(ended.kind).toBe('CapabilityDenied');
    expect(ended.message).toMatch(/already ended \(completed\)/);
    expect(await cancel.run({ missionId: 'mission-a3' }, ctx(alice))).toMatchObject({ output: { result: 'already-cancelled' } });
    expect(port.cancelled).toEqual([]);
  });

  it('the local owner may cancel anyone’s; the input cannot name who asks', async () => {
    const port = stubPort(missions());
    const { cancel } = tools(port);
    await cancel.run({ missionId: 'mission-b1' }, ctx(owner));
    expect(port.cancelled).toEqual(['mission-b1']);
    expect((await refusal(cancel.run({ missionId: 'mission-a1', sender: '42' }, ctx(bob)))).kind).toBe('InvalidScope');
    expect((await refusal(cancel.run({ missionId: 'a1; drop' }, ctx(alice)))).kind).toBe('InvalidScope');
  });

  it('without a port both tools refuse', async () => {
    const [list, cancel] = createMissionControlTools({});
    expect((await refusal(list!.run({}, ctx(alice)))).message).toMatch(/cannot see missions/);
    expect((await refusal(cancel!.run({ missionId: 'mission-a1' }, ctx(alice)))).message).toMatch(/cannot see missions/);
  });
});

describe('ownsMission', () => {
  it('second approvers count; an empty identity never does', () => {
    const owners = { approvers: [{ identity: '9', channel: 'email' }], sender: { identity: '', channel: 'telegram' } };
    expect(ownsMission(owners, { identity: '9', channel: 'email', trustTier: 'SemiTrusted', local: false })).toBe(true);
    expect(ownsMission(owners, { identity: '', channel: 'telegram', trustTier: 'SemiTrusted', local: false })).toBe(false);
    expect(ownsMission(owners, { identity: 'local-user', channel: 'cli', trustTier: 'SemiTrusted', local: true })).toBe(false);
  });
});

describe('recurring missions (Telegram /missions Pause / Resume)', () => {
  const sched = (scheduleId: string, sender: string): ScheduleRecord => ({
    scheduleId,
    goal: `goal of ${scheduleId}`,
    paused: false,
    owners: { approvers: [{ identity: sender, channel: 'telegram' }], sender: { identity: 'local-user', channel: 'cli' } },
  });
  const port = (): ScheduleControlPort & { acted: string[] } => {
    const acted: string[] = [];
    const all = [sched('mission-s1', '42'), sched('mission-s2', '77')];
    return {
      acted,
      scheduleRecords: async ({ where }) => all.filter((s) => where(s.owners)),
      scheduleRecord: async (id) => all.find((s) => s.scheduleId === id),
      scheduleAction: async (id, action) => void acted.push(`${action} ${id}`),
    };
  };
  const asker = (identity: string) => ({ identity, channel: 'telegram', trustTier: 'SemiTrusted' as const, local: false });

  it("lists and pauses the asker's own; another's is NotFound and untouched", async () => {
    const p = port();
    expect((await listOwnSchedules(p, asker('42'), 10)).map((s) => s.scheduleId)).toEqual(['mission-s1']);
    expect(await setOwnSchedule(p, asker('42'), 'mission-s1', 'pause')).toEqual({ scheduleId: 'mission-s1', paused: true });
    expect((await refusal(setOwnSchedule(p, asker('42'), 'mission-s2', 'pause'))).kind).toBe('NotFound');
    expect(p.acted).toEqual(['pause mission-s1']);
  });
});
