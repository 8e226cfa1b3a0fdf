/**
 * Which mission may resume an escalated turn, and for which call: openTurn's and attestStepTurn's
 * checks on a resume record (activities/turn/resume.ts), on their own.
 */
import { describe, expect, it } from 'vitest';
import { grantedCall, resumingMission } from '../../activities/turn/resume.js';
import type { ResumeRecord } from '../../activities/ports.js';
import { inputHash } from '../../core/canonical-json.js';
import { confirmationMissionId } from '../../workflows/turn-ids.js';

const record = (turnId: string): ResumeRecord => ({
  turnId,
  runId: 'r',
  step: 0,
  call: { callId: 's0c0', tool: 'fs.write', input: { path: '/tmp/a', content: 'a' } },
  transcript: [],
  context: [],
  taint: [],
  trusted: [],
});

describe('resume record checks', () => {
  it("a mission resumes its own step turns and the channel turn it confirms, nobody else's", () => {
    expect(resumingMission('mission-1/step-0/run-1', 'mission-1')).toBe(true);
    expect(resumingMission('mission-1/step-3/run-12', 'mission-1')).toBe(true);
    expect(resumingMission('turn/rest/m1', confirmationMissionId('turn/rest/m1'))).toBe(true);
    // Another mission's turns, one whose id only starts with this one's, or something else under its id.
    expect(resumingMission('mission-2/step-0/run-1', 'mission-1')).toBe(false);
    expect(resumingMission('mission-1/plan-1/step-0/run-1', 'mission-1')).toBe(false);
    expect(resumingMission('mission-10/step-0/run-1', 'mission-1')).toBe(false);
    expect(resumingMission('turn/rest/m2', confirmationMissionId('turn/rest/m1'))).toBe(false);
  });

  it('a record is for exactly the granted tool and input', () => {
    const r = record('mission-1/step-0/run-1');
    expect(grantedCall(r, { tool: 'fs.write', inputHash: inputHash({ path: '/tmp/a', content: 'a' }) })).toBe(true);
    expect(grantedCall(r, { tool: 'fs.write', inputHash: inputHash({ path: '/tmp/b', content: 'a' }) })).toBe(false);
    expect(grantedCall(r, { tool: 'fs.delete', inputHash: inputHash({ path: '/tmp/a', content: 'a' }) })).toBe(false);
  });
});
