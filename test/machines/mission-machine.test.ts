import { getAdjacencyMap, getShortestPaths } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { createActor, type SnapshotFrom } from 'xstate';
import { missionMachine, type MissionEvent, type MissionMachineInput } from '../../machines/index.js';

const grant = { gateId: 'g', tool: 'shell.exec', inputHash: 'h' };
// `attempt` grows on every approve/escalate cycle: the graph is over (state, step), not attempts.
const serializeState = (s: SnapshotFrom<typeof missionMachine>): string => JSON.stringify([s.value, s.context.step]);
const events: MissionEvent[] = [
  { type: 'START' },
  { type: 'STEP_DONE' },
  { type: 'STEP_ESCALATED', gateId: 'g' },
  { type: 'STEP_FAILED', reason: 'boom' },
  { type: 'GATE_APPROVED', grant },
  { type: 'GATE_DENIED', reason: 'no' },
  { type: 'GATE_EXPIRED' },
  { type: 'CANCEL' },
];

function run(input: MissionMachineInput, ...evs: MissionEvent[]): SnapshotFrom<typeof missionMachine> {
  const actor = createActor(missionMachine, { input }).start();
  for (const e of evs) actor.send(e);
  return actor.getSnapshot();
}

describe('missionMachine', () => {
  it('runs steps in order, waits at a gate, reruns the step with the grant, completes', () => {
    const input = { stepCount: 2, onExpire: 'fail' as const };
    let s = run(input, { type: 'START' });
    expect(s.value).toBe('running');
    expect(s.context).toMatchObject({ step: 0, attempt: 1 });
    s = run(input, { type: 'START' }, { type: 'STEP_DONE' }, { type: 'STEP_ESCALATED', gateId: 'g' });
    expect(s.value).toBe('waiting');
    expect(s.context).toMatchObject({ step: 1, gateId: 'g' });
    s = run(input, { type: 'START' }, { type: 'STEP_DONE' }, { type: 'STEP_ESCALATED', gateId: 'g' }, { type: 'GATE_APPROVED', grant });
    expect(s.value).toBe('running');
    expect(s.context).toMatchObject({ step: 1, attempt: 2, grant });
    s = run(
      input,
      { type: 'START' },
      { type: 'STEP_DONE' },
      { type: 'STEP_ESCALATED', gateId: 'g' },
      { type: 'GATE_APPROVED', grant },
      { type: 'STEP_DONE' },
    );
    expect(s.value).toBe('completed');
  });

  it('an expired gate ends the mission as the policy says', () => {
    expect(
      run({ stepCount: 2, onExpire: 'fail' }, { type: 'START' }, { type: 'STEP_ESCALATED', gateId: 'g' }, { type: 'GATE_EXPIRED' }).value,
    ).toBe('expired');
    const skipped = run(
      { stepCount: 2, onExpire: 'skip-step' },
      { type: 'START' },
      { type: 'STEP_ESCALATED', gateId: 'g' },
      { type: 'GATE_EXPIRED' },
    );
    expect(skipped.value).toBe('running');
    expect(skipped.context).toMatchObject({ step: 1, attempt: 1 });
    expect(
      run({ stepCount: 1, onExpire: 'skip-step' }, { type: 'START' }, { type: 'STEP_ESCALATED', gateId: 'g' }, { type: 'GATE_EXPIRED' })
        .value,
    ).toBe('completed');
  });

  it('denial and a failed step fail it; cancel works from every live state; no steps completes at once', () => {
    expect(
      run(
        { stepCount: 2, onExpire: 'fail' },
        { type: 'START' },
        { type: 'STEP_ESCALATED', gateId: 'g' },
        { type: 'GATE_DENIED', reason: 'no' },
      ).context.failure,
    ).toBe('no');
    expect(run({ stepCount: 2, onExpire: 'fail' }, { type: 'START' }, { type: 'STEP_FAILED', reason: 'x' }).value).toBe('failed');
    expect(run({ stepCount: 2, onExpire: 'fail' }, { type: 'CANCEL' }).value).toBe('cancelled');
    expect(run({ stepCount: 2, onExpire: 'fail' }, { type: 'START' }, { type: 'CANCEL' }).value).toBe('cancelled');
    expect(
      run({ stepCount: 2, onExpire: 'fail' }, { type: 'START' }, { type: 'STEP_ESCALATED', gateId: 'g' }, { type: 'CANCEL' }).value,
    ).toBe('cancelled');
    expect(run({ stepCount: 0, onExpire: 'fail' }, { type: 'START' }).value).toBe('completed');
  });

  it('every state is reachable and every reachable state can reach a final state', () => {
    for (const onExpire of ['fail', 'skip-step'] as const) {
      const input = { stepCount: 2, onExpire };
      const map = getAdjacencyMap(missionMachine, { input, events, serializeState });
      const values = new Set(Object.values(map).map((v) => String(v.state.value)));
      const expected =
        onExpire === 'fail'
          ? ['cancelled', 'completed', 'expired', 'failed', 'planned', 'running', 'waiting']
          : ['cancelled', 'completed', 'failed', 'planned', 'running', 'waiting'];
      expect([...values].sort()).toEqual(expected);
      for (const v of Object.values(map)) {
        if (v.state.status === 'done') continue;
        const toEnd = getShortestPaths(missionMachine, {
          input,
          events,
          serializeState,
          fromState: v.state,
          toState: (s) => s.status === 'done',
        });
        expect(toEnd.length, `stuck in ${JSON.stringify(v.state.value)}`).toBeGreaterThan(0);
      }
    }
  });

  it('round-trips a persisted snapshot mid-mission', () => {
    const input = { stepCount: 3, onExpire: 'fail' as const };
    const a = createActor(missionMachine, { input }).start();
    a.send({ type: 'START' });
    a.send({ type: 'STEP_DONE' });
    a.send({ type: 'STEP_ESCALATED', gateId: 'g' });
    const persisted = JSON.parse(JSON.stringify(a.getPersistedSnapshot())) as unknown;
    const b = createActor(missionMachine, { snapshot: persisted as never, input }).start();
    expect(b.getSnapshot().value).toBe('waiting');
    expect(b.getSnapshot().context).toMatchObject({ step: 1, gateId: 'g' });
    b.send({ type: 'GATE_APPROVED', grant });
    b.send({ type: 'STEP_DONE' });
    b.send({ type: 'STEP_DONE' });
    expect(b.getSnapshot().value).toBe('completed');
  });
});
