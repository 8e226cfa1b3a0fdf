import { getAdjacencyMap, getSimplePaths } from '@xstate/graph';
import { describe, expect, it } from 'vitest';
import { createActor, type SnapshotFrom } from 'xstate';
import { gateMachine, OPEN_GATE_STATES, type GateApprover, type GateEvent, type GateInput } from '../../machines/index.js';

const alice: GateApprover = { identity: 'alice', channel: 'telegram', trustTier: 'Trusted' };
const bob: GateApprover = { identity: 'bob', channel: 'email', trustTier: 'SemiTrusted' };
const input: GateInput = {
  gateId: 'g1',
  tool: 'shell.exec',
  inputHash: 'h',
  approvers: [{ identity: 'alice', channel: 'telegram' }],
  secondApprovers: [{ identity: 'bob', channel: 'email' }],
};

const events: GateEvent[] = [
  { type: 'REMIND' },
  { type: 'ESCALATE' },
  { type: 'APPROVE', approver: alice },
  { type: 'APPROVE', approver: bob },
  { type: 'DENY', approver: alice },
  { type: 'APPROVE', approver: { ...alice, trustTier: 'Untrusted' } },
  { type: 'APPROVE', approver: { identity: 'mallory', channel: 'telegram', trustTier: 'Trusted' } },
  { type: 'EXPIRE' },
  { type: 'WITHDRAW' },
];

function run(...evs: GateEvent[]): SnapshotFrom<typeof gateMachine> {
  const actor = createActor(gateMachine, { input }).start();
  for (const e of evs) actor.send(e);
  return actor.getSnapshot();
}

describe('gateMachine', () => {
  it('an approver on the list decides once', () => {
    const s = run({ type: 'APPROVE', approver: alice }, { type: 'DENY', approver: alice });
    expect(s.value).toBe('approved');
    expect(s.context.decidedBy).toEqual(alice);
  });

  it('ignores an Untrusted tier, an unlisted identity, and the second approver before escalation', () => {
    for (const approver of [{ ...alice, trustTier: 'Untrusted' as const }, { ...alice, channel: 'email' }, bob]) {
      const s = run({ type: 'APPROVE', approver });
      expect(s.value).toBe('open');
      expect(s.context.decidedBy).toBeUndefined();
    }
  });

  it('reminds, escalates to the second approver, who may then decide', () => {
    const s = run({ type: 'REMIND' }, { type: 'ESCALATE' }, { type: 'DENY', approver: bob, reason: 'no' });
    expect(s.value).toBe('denied');
    expect(s.context).toMatchObject({ escalated: true, decidedBy: bob, reason: 'no' });
  });

  it('does not escalate without second approvers', () => {
    const actor = createActor(gateMachine, { input: { ...input, secondApprovers: [] } }).start();
    actor.send({ type: 'ESCALATE' });
    expect(actor.getSnapshot().value).toBe('open');
  });

  it('expires and withdraws from every open state', () => {
    expect(run({ type: 'EXPIRE' }).value).toBe('expired');
    expect(run({ type: 'REMIND' }, { type: 'EXPIRE' }).value).toBe('expired');
    expect(run({ type: 'ESCALATE' }, { type: 'WITHDRAW', reason: 'mission cancelled' }).value).toBe('withdrawn');
  });

  it('every state is reachable and every reachable state can still end', () => {
    const map = getAdjacencyMap(gateMachine, { input, events });
    const values = new Set(Object.values(map).map((v) => String(v.state.value)));
    expect([...values].sort()).toEqual(['approved', 'denied', 'escalated', 'expired', 'open', 'reminded', 'withdrawn']);
    for (const [key, v] of Object.entries(map)) {
      if (v.state.status === 'done') continue;
      // A non-final gate state is an open gate and has a way out to a final state.
      expect(OPEN_GATE_STATES).toContain(v.state.value);
      const exits = Object.values(v.transitions).map((t) => String((t as { state: { value: unknown } }).state.value));
      expect(
        exits.some((x) => ['approved', 'denied', 'expired', 'withdrawn'].includes(String(x))),
        key,
      ).toBe(true);
    }
    const paths = getSimplePaths(gateMachine, { input, events });
    for (const p of paths) expect(p.state.status === 'done' || OPEN_GATE_STATES.includes(p.state.value as never)).toBe(true);
  });

  it('round-trips a persisted snapshot', () => {
    const a = createActor(gateMachine, { input }).start();
    a.send({ type: 'REMIND' });
    a.send({ type: 'ESCALATE' });
    const persisted = JSON.parse(JSON.stringify(a.getPersistedSnapshot())) as unknown;
    const b = createActor(gateMachine, { snapshot: persisted as never, input }).start();
    expect(b.getSnapshot().value).toBe('escalated');
    b.send({ type: 'APPROVE', approver: bob });
    expect(b.getSnapshot().value).toBe('approved');
  });
});
