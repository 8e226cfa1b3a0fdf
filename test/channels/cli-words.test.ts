/**
 * What the CLI says, in the owner's words (issue #32 item 6): tool outcomes without audit jargon,
 * honest tool counts, "step N of M" as the UI says it, one line of "did you mean", and the spec a
 * one-line reminder sends. The terminal forms are in test/e2e/cli-edges.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { summarizeToolOutcome, type ToolOutcome } from '../../core/outcomes.js';
import { closest, editDistance, unknownCommand } from '../../channels/cli/did-you-mean.js';
import { outcomeLine } from '../../channels/cli/chat.js';
import { missionSpecOf, stepLine } from '../../channels/cli/mission-commands.js';
import { toolSummaryFailed, toolSummaryText } from '../../channels/outcome-text.js';
import { parseMissionSpec } from '../../channels/mission-input.js';

describe('a tool call in the owner’s words (the audit keeps its own form)', () => {
  const said = (o: ToolOutcome) => toolSummaryText(summarizeToolOutcome(o));
  it('says done, checked or not, refused and failed without Completed(NotApplicable)', () => {
    expect(said({ status: 'Completed', output: {}, verified: 'NotApplicable' })).toBe('done');
    expect(said({ status: 'Completed', output: {}, verified: 'Verified' })).toBe('done (checked afterwards)');
    expect(said({ status: 'Completed', output: {}, verified: 'Unverified' })).toBe('done (its effect was not checked)');
    expect(said({ status: 'Denied', scope: 'fs.read:/etc/shadow', held: [] })).toBe('refused: it needs fs.read:/etc/shadow (not granted)');
    expect(said({ status: 'RequiresEscalation', reason: 'confirm first' })).toBe('needs approval first');
    expect(said({ status: 'Failed', error: { kind: 'NotFound', message: 'no such file' } })).toBe('failed (NotFound)');
    expect(toolSummaryFailed(summarizeToolOutcome({ status: 'Failed', error: { kind: 'Tool', message: 'x' } }))).toBe(true);
    expect(toolSummaryFailed(summarizeToolOutcome({ status: 'Completed', output: {}, verified: 'Unverified' }))).toBe(false);
  });
});

describe('honest tool counts', () => {
  const done = { status: 'Completed', finalMessage: 'ok', durationMs: 12 } as const;
  it('counts the tools that ran and says how many of them failed', () => {
    expect(outcomeLine({ ...done, toolCallsMade: 0 })).toBe('[Completed · no tool ran · 12 ms]');
    expect(outcomeLine({ ...done, toolCallsMade: 1 }, { failed: 1 })).toBe('[Completed · 1 tool ran (it failed) · 12 ms]');
    expect(outcomeLine({ ...done, toolCallsMade: 3 }, { failed: 1 })).toBe('[Completed · 3 tools ran (1 failed) · 12 ms]');
    expect(outcomeLine({ ...done, toolCallsMade: 2 }, { failed: 2 })).toBe('[Completed · 2 tools ran (all failed) · 12 ms]');
    // A call the scope check refused never ran: said as such, not as "0 tool calls".
    expect(outcomeLine({ ...done, toolCallsMade: 0 }, { refused: 1 })).toBe('[Completed · no tool ran, 1 call refused · 12 ms]');
    expect(outcomeLine({ status: 'Cancelled', toolCallsMade: 1 })).toBe('[Cancelled · 1 tool ran]');
  });
});

describe('where a mission is', () => {
  it('is 1-based "step N of M", never past the last step, as the Temporal UI says it', () => {
    // A finished two-step mission: the machine's step index is past the end (2), the UI says step 2 of 2.
    expect(stepLine({ step: 2, stepsRun: 2, steps: 2 })).toBe('  step 2 of 2 (2 step runs so far)');
    expect(stepLine({ step: 0, stepsRun: 0, steps: 3 })).toBe('  step 1 of 3 (0 step runs so far)');
    expect(stepLine({ step: 1, stepsRun: 1 })).toBe('  step 2 (1 step run so far)');
  });
});

describe('did you mean', () => {
  const commands = ['up', 'chat', 'mission', 'sessions', 'approvals', 'approve', 'deny', 'memory', 'inbox', 'secrets', 'config'];
  it('names the closest command in one line', () => {
    expect(unknownCommand('sesions', commands)).toBe('unknown command "sesions" — did you mean "sessions"?');
    expect(unknownCommand('chta', commands)).toBe('unknown command "chta" — did you mean "chat"?');
    expect(unknownCommand('misison', commands)).toBe('unknown command "misison" — did you mean "mission"?');
    expect(unknownCommand('aprove', commands)).toBe('unknown command "aprove" — did you mean "approve"?');
    expect(unknownCommand('frobnicate', commands)).toBe('unknown command "frobnicate" (aivyx help lists them)');
    expect(unknownCommand('x', commands).split('\n')).toHaveLength(1);
  });
  it('counts a swap of neighbours as one edit and names every tie', () => {
    expect(editDistance('sesions', 'sessions')).toBe(1);
    expect(editDistance('chta', 'chat')).toBe(1);
    expect(closest('appro', commands)).toEqual(['approvals', 'approve']);
  });
});

describe('a reminder in one line', () => {
  const opts = { timeZone: 'Europe/Berlin', now: () => Date.parse('2027-03-27T10:00:00Z') };
  it('--at and --say make a wait, a notice and the goal, and hold no capabilities', () => {
    const spec = missionSpecOf({ at: 'tomorrow 09:00', say: 'call the bank' }, opts);
    expect(spec).toEqual({
      goal: 'call the bank',
      steps: [{ waitUntil: '2027-03-28T09:00', timeZone: 'Europe/Berlin' }, { notify: 'call the bank' }],
      capabilities: [],
    });
    // The REST channel accepts exactly that.
    expect(parseMissionSpec(spec)).toMatchObject({ goal: 'call the bank', capabilities: [] });
  });
  it('--in, --time-zone and task steps: a mission with steps keeps the assistant’s capabilities', () => {
    expect(missionSpecOf({ in: '2h', say: 'tea', goal: 'tea time' }, opts)).toMatchObject({
      goal: 'tea time',
      steps: [{ wait: '2h' }, { notify: 'tea' }],
    });
    expect(missionSpecOf({ at: '09:00', 'time-zone': 'Asia/Tokyo', say: 'x' }, opts).steps).toEqual([
      { waitUntil: '2027-03-28T09:00', timeZone: 'Asia/Tokyo' },
      { notify: 'x' },
    ]);
    const withTask = missionSpecOf({ in: '1h', step: ['summarise my inbox'], say: 'done' }, opts);
    expect(withTask).not.toHaveProperty('capabilities');
  });
  it('refuses --in with --at, a wait with a schedule, and nothing to say', () => {
    expect(() => missionSpecOf({ in: '2h', at: '09:00', say: 'x' }, opts)).toThrow(/give --in or --at, not both/);
    expect(() => missionSpecOf({ in: '2h', every: '7d', say: 'x' }, opts)).toThrow(/--in\/--at wait once; --every\/--cron repeat/);
    expect(() => missionSpecOf({ in: '2h' }, opts)).toThrow(/needs --goal TEXT, --say TEXT/);
    expect(() => missionSpecOf({ in: 'soon', say: 'x' }, opts)).toThrow(/--in "soon" is not a duration/);
  });
});
