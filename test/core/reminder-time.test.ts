/**
 * `mission create --in/--at` as a person types it, turned into a mission's first step: durations,
 * "tomorrow 09:00" in a zone (across both DST changes and a zone behind UTC), a bare time of day,
 * and the times refused before anything starts (past, skipped by the clocks, malformed).
 */
import { describe, expect, it } from 'vitest';
import { localToInstant } from '../../core/local-time.js';
import { missionStepSpecSchema } from '../../core/mission-spec.js';
import { waitStepAt, waitStepIn } from '../../core/reminder-time.js';

const at = (iso: string) => Date.parse(iso);

describe('--in', () => {
  it('takes one unit as written and adds up several', () => {
    expect(waitStepIn('2h')).toEqual({ wait: '2h' });
    expect(waitStepIn('90s')).toEqual({ wait: '90s' });
    expect(waitStepIn('1h30m')).toEqual({ wait: 5_400_000 });
    expect(waitStepIn('1d 2h')).toEqual({ wait: 93_600_000 });
    // What it makes is a step the mission spec accepts.
    expect(missionStepSpecSchema.safeParse(waitStepIn('1h30m')).success).toBe(true);
  });
  it('refuses what is not a duration, or no time at all', () => {
    expect(() => waitStepIn('soon')).toThrow(/not a duration such as 90s, 2h, 3d or 1h30m/);
    expect(() => waitStepIn('2 hours')).toThrow(/not a duration/);
    expect(() => waitStepIn('2h later')).toThrow(/not a duration/);
    expect(() => waitStepIn('0s')).toThrow(/no time at all/);
  });
});

describe('--at in a time zone', () => {
  it('"tomorrow 09:00" the day before the clocks go forward is 09:00 summer time (UTC+2)', () => {
    const step = waitStepAt('tomorrow 09:00', 'Europe/Berlin', at('2027-03-27T10:00:00Z'));
    expect(step).toEqual({ waitUntil: '2027-03-28T09:00', timeZone: 'Europe/Berlin' });
    expect(localToInstant(step.waitUntil, 'Europe/Berlin')).toBe('2027-03-28T09:00:00+02:00');
  });
  it('"tomorrow 09:00" the day before the clocks go back is 09:00 winter time (UTC+1)', () => {
    const step = waitStepAt('tomorrow 09:00', 'Europe/Berlin', at('2027-10-30T10:00:00Z'));
    expect(localToInstant(step.waitUntil, 'Europe/Berlin')).toBe('2027-10-31T09:00:00+01:00');
  });
  it('"tomorrow" is tomorrow where the owner is, not in UTC', () => {
    // 03:00 UTC on 12 March is still 11 March in Los Angeles: tomorrow there is the 12th.
    expect(waitStepAt('tomorrow 09:00', 'America/Los_Angeles', at('2027-03-12T03:00:00Z')).waitUntil).toBe('2027-03-12T09:00');
    expect(waitStepAt('tomorrow 09:00', 'Asia/Tokyo', at('2027-03-12T03:00:00Z')).waitUntil).toBe('2027-03-13T09:00');
  });
  it('a bare time is today while it is ahead, else tomorrow; a date and time is taken as written', () => {
    const now = at('2027-06-01T10:00:00Z'); // 12:00 in Berlin
    expect(waitStepAt('17:30', 'Europe/Berlin', now).waitUntil).toBe('2027-06-01T17:30');
    expect(waitStepAt('9:00', 'Europe/Berlin', now).waitUntil).toBe('2027-06-02T09:00');
    expect(waitStepAt('Today 17:30', 'Europe/Berlin', now).waitUntil).toBe('2027-06-01T17:30');
    expect(waitStepAt('2027-07-01 08:15', 'UTC', now)).toEqual({ waitUntil: '2027-07-01T08:15', timeZone: 'UTC' });
    expect(waitStepAt('2027-07-01T08:15', 'UTC', now).waitUntil).toBe('2027-07-01T08:15');
    // An instant with its offset needs no zone.
    expect(waitStepAt('2027-07-01T08:15:00+02:00', 'UTC', now)).toEqual({ waitUntil: '2027-07-01T08:15:00+02:00' });
  });
  it('a time the clocks repeat (02:30 when they go back) is taken; one they skip is refused', () => {
    const now = at('2027-03-01T00:00:00Z');
    expect(waitStepAt('2027-10-31 02:30', 'Europe/Berlin', now).waitUntil).toBe('2027-10-31T02:30');
    expect(() => waitStepAt('2027-03-28 02:30', 'Europe/Berlin', now)).toThrow(/does not exist in Europe\/Berlin \(the clocks skip it\)/);
  });
  it('refuses a time already past, a malformed one and an unknown zone', () => {
    const now = at('2027-06-01T10:00:00Z');
    expect(() => waitStepAt('today 08:00', 'Europe/Berlin', now)).toThrow(/is in the past \(2027-06-01T08:00:00\+02:00\)/);
    expect(() => waitStepAt('2027-06-01T09:00:00Z', 'UTC', now)).toThrow(/in the past/);
    expect(() => waitStepAt('yesterday 09:00', 'UTC', now)).toThrow(/not a time such as "tomorrow 09:00"/);
    expect(() => waitStepAt('tomorrow 25:00', 'UTC', now)).toThrow(/not a time of day/);
    expect(() => waitStepAt('2027-02-30 09:00', 'UTC', now)).toThrow(/not a real date/);
    expect(() => waitStepAt('tomorrow 09:00', 'Mars/Base', now)).toThrow(/unknown time zone "Mars\/Base"/);
  });
  it('makes steps the mission spec accepts', () => {
    const step = waitStepAt('tomorrow 09:00', 'Europe/Berlin', at('2027-03-27T10:00:00Z'));
    expect(missionStepSpecSchema.safeParse(step).success).toBe(true);
  });
});
