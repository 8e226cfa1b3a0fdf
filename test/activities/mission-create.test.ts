/**
 * The `mission.create` implementation over a recording start port: the definition is built from the
 * verified turn (asker and owner approve, notices go to the asking chat, a local time becomes an
 * instant with its offset), a retried call names the same mission, and a mission that asks for more
 * than the conversation holds is refused before anything starts.
 */
import { describe, expect, it } from 'vitest';
import type { MissionStartPort } from '../../activities/ports.js';
import { createMissionCreateTool } from '../../activities/tools/mission-create.js';
import type { ToolRunContext } from '../../activities/tools/index.js';
import type { ChannelFacts } from '../../core/channel.js';
import type { MissionScheduleSpec } from '../../core/mission-spec.js';
import { describeCall } from '../../core/tools/describe-call.js';
import { AivyxError } from '../../core/errors.js';
import type { MissionDefinition } from '../../workflows/mission-messages.js';

const alice: ChannelFacts = { name: 'telegram', platform: 'Telegram', trustTier: 'SemiTrusted', sessionId: 'tg-42', sender: '42' };

function ctx(over: Partial<ToolRunContext> = {}): ToolRunContext {
  return {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    idemKey: 'turn/telegram/42-7/run-1/5',
    turnId: 'turn/telegram/42-7',
    held: ['mission.create:notify', 'fs.read:/home/u/notes/**'],
    channel: alice,
    replyRoute: { botId: 1, chatId: 42, replyTo: 7 },
    recordMemoryAccess: async () => undefined,
    ...over,
  };
}

function recording(): MissionStartPort & { started: MissionDefinition[]; scheduled: [MissionDefinition, MissionScheduleSpec][] } {
  const started: MissionDefinition[] = [];
  const scheduled: [MissionDefinition, MissionScheduleSpec][] = [];
  return {
    started,
    scheduled,
    start: async (def) => void started.push(def),
    schedule: async (def, when) => void scheduled.push([def, when]),
  };
}

const reminder = {
  goal: 'call the bank',
  steps: [{ waitUntil: '2027-03-01T09:00', timeZone: 'Europe/Berlin' }, { notify: 'Reminder: call the bank' }],
};

describe('mission.create', () => {
  it('builds the mission from the verified turn and starts it once per call', async () => {
    const starts = recording();
    const tool = createMissionCreateTool({ starts });
    const first = await tool.run(reminder, ctx());
    const again = await tool.run(reminder, ctx());
    expect(first).toEqual(again);
    expect(starts.started[0]).toEqual(starts.started[1]);
    const def = starts.started[0]!;
    expect(def.missionId).toMatch(/^mission-[0-9a-f]{32}$/);
    expect(first).toMatchObject({ kind: 'completed', output: { missionId: def.missionId, steps: 2 }, verified: 'Verified' });
    expect(def.steps).toEqual([
      { kind: 'wait', until: '2027-03-01T09:00:00+01:00', timeZone: 'Europe/Berlin' },
      { kind: 'notify', text: 'Reminder: call the bank' },
    ]);
    expect(def.approvers).toEqual([
      { identity: '42', channel: 'telegram' },
      { identity: 'local-user', channel: 'cli' },
    ]);
    expect(def.channel).toEqual({ ...alice, sessionId: def.missionId });
    expect(def.replyRoute).toEqual({ botId: 1, chatId: 42, replyTo: 7 });
    expect(def.capabilities).toEqual([]);
    // Another call (another key) is another mission.
    await tool.run(reminder, ctx({ idemKey: 'turn/telegram/42-8/run-1/5' }));
    expect(starts.started[2]!.missionId).not.toBe(def.missionId);
  });

  it('a mission asking for more than the conversation holds is refused and nothing starts', async () => {
    const starts = recording();
    const tool = createMissionCreateTool({ starts });
    const greedy = { goal: 'tidy', steps: ['delete my old notes'], capabilities: ['fs.delete:/home/u/**'] };
    const err = await tool.run(greedy, ctx({ held: ['mission.create', 'fs.read:/home/u/notes/**'] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AivyxError);
    expect(err).toMatchObject({ kind: 'CapabilityDenied' });
    expect((err as Error).message).toMatch(/asks for fs\.delete:\/home\/u\/\*\*, which this conversation does not hold/);
    expect(starts.started).toEqual([]);
    // Within what it holds: started, with exactly that set.
    await tool.run(
      { ...greedy, capabilities: ['fs.read:/home/u/notes/**'] },
      ctx({ held: ['mission.create', 'fs.read:/home/u/notes/**'] }),
    );
    expect(starts.started[0]!.capabilities).toEqual(['fs.read:/home/u/notes/**']);
  });

  it('a notice to someone else needs channel.send for their channel: shown to the approver, refused unless the conversation holds it', async () => {
    const starts = recording();
    const tool = createMissionCreateTool({ starts });
    const tell = { goal: 'tell Bob', steps: [{ wait: '1d' }, { notify: 'the rent is due', to: ['email:bob@example.com'] }] };
    expect(describeCall('mission.create', tell).lines).toEqual([
      'goal: "tell Bob"',
      'step 1: wait 1d',
      'step 2: notify 1 person "the rent is due"',
      '  to: email:bob@example.com',
      'capabilities: channel.send:email',
    ]);
    const err = await tool.run(tell, ctx()).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'CapabilityDenied' });
    expect((err as Error).message).toMatch(/channel\.send:email/);
    expect(starts.started).toEqual([]);
    await tool.run(tell, ctx({ held: ['mission.create:notify', 'channel.send:email'] }));
    expect(starts.started[0]!.capabilities).toEqual(['channel.send:email']);
  });

  it('"every Monday at 8 summarise what waits for me": a recurring mission, shown to the approver with its schedule, becomes a Schedule (not a run)', async () => {
    const starts = recording();
    const weekly = {
      goal: 'weekly digest',
      steps: ['summarise what is waiting for me'],
      capabilities: ['fs.read:/home/u/notes/**'],
      schedule: { cron: '0 8 * * MON', timeZone: 'Europe/Berlin' },
    };
    expect(describeCall('mission.create', weekly).lines.at(-1)).toBe(
      'recurring: cron "0 8 * * MON" (Europe/Berlin), each run a mission of its own',
    );
    const out = await createMissionCreateTool({ starts }).run(weekly, ctx({ held: ['mission.create', 'fs.read:/home/u/notes/**'] }));
    expect(starts.started).toEqual([]);
    expect(starts.scheduled).toHaveLength(1);
    const [template, when] = starts.scheduled[0]!;
    expect(when).toEqual({ cron: '0 8 * * MON', timeZone: 'Europe/Berlin' });
    expect(out).toMatchObject({ output: { scheduleId: template.missionId } });
    expect(template.capabilities).toEqual(['fs.read:/home/u/notes/**']);
    await expect(
      createMissionCreateTool({ starts }).run({ ...weekly, schedule: { cron: 'mondays' } }, ctx({ held: ['mission.create'] })),
    ).rejects.toThrow(/"schedule\.cron" must be a 5-field cron expression/);
  });

  it('a bad step is refused naming it; a worker without a start port says so', async () => {
    const tool = createMissionCreateTool({ starts: recording() });
    await expect(tool.run({ goal: 'g', steps: [{ waitUntil: '2027-03-01T09:00', timeZone: 'Mars/Base' }] }, ctx())).rejects.toThrow(
      /mission\.create: "steps\.0\.timeZone" unknown time zone "Mars\/Base"/,
    );
    await expect(createMissionCreateTool({}).run(reminder, ctx())).rejects.toThrow(/this worker cannot start missions/);
  });
});
