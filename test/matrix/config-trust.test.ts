/** Matrix configuration from AIVYX_MATRIX_* and sealed secrets, and the tier of a Matrix sender. */
import { describe, expect, it } from 'vitest';
import { matrixConfigFromEnv } from '../../channels/matrix/config.js';
import { resolveMatrixTier } from '../../channels/matrix/trust.js';
import { defineStep, missionStepSpecSchema } from '../../core/mission-spec.js';
import { eventMatches, type MissionEventMatch } from '../../machines/index.js';

const secret = async (n: string) => ({ 'mx-token': 'syt_abc' })[n];
const base = {
  AIVYX_MATRIX_HOMESERVER: 'https://matrix.example.org',
  AIVYX_MATRIX_USER_ID: '@aivyx:example.org',
  AIVYX_MATRIX_TOKEN_SECRET: 'mx-token',
};

describe('matrixConfigFromEnv', () => {
  it('is off without AIVYX_MATRIX_HOMESERVER', async () => {
    expect(await matrixConfigFromEnv({}, secret)).toBeUndefined();
  });

  it('reads the token from the named secret, the allowlist and per-room tiers (room ids hold colons)', async () => {
    const c = await matrixConfigFromEnv(
      { ...base, AIVYX_MATRIX_ALLOWLIST: '@alice:example.org', AIVYX_MATRIX_ROOM_TIERS: '!fam:example.org:SemiTrusted' },
      secret,
    );
    expect(c).toEqual({
      homeserver: 'https://matrix.example.org',
      userId: '@aivyx:example.org',
      accessToken: 'syt_abc',
      allowlist: ['@alice:example.org'],
      roomTiers: { '!fam:example.org': 'SemiTrusted' },
      verifiedDevices: [],
    });
  });

  it('reads pinned devices: user, device id and the ed25519 key as Element shows it (grouped by spaces) in canonical form', async () => {
    const key = 'Nmsc7yZsfV6c/GT6Or7NXIcN2mgmtqWymkfWhyUdVEE';
    const shown = key.match(/.{1,4}/g)!.join(' ');
    const c = await matrixConfigFromEnv(
      { ...base, AIVYX_MATRIX_VERIFIED_DEVICES: `@alice:example.org/GXNJJOQBJN=${shown}, @a/b:m.org:8448/X=${key}=` },
      secret,
    );
    expect(c?.verifiedDevices).toEqual([
      { userId: '@alice:example.org', deviceId: 'GXNJJOQBJN', ed25519: key },
      { userId: '@a/b:m.org:8448', deviceId: 'X', ed25519: key },
    ]);
  });

  it('refuses a pin without a device, with a display name, or with something that is not a 32-byte key', async () => {
    const pins = (v: string) => matrixConfigFromEnv({ ...base, AIVYX_MATRIX_VERIFIED_DEVICES: v }, secret);
    const key = 'Nmsc7yZsfV6c/GT6Or7NXIcN2mgmtqWymkfWhyUdVEE';
    await expect(pins(`@alice:example.org=${key}`)).rejects.toThrow(/is not @user:server\/DEVICEID=<ed25519 key>/);
    await expect(pins(`Alice/GXNJJOQBJN=${key}`)).rejects.toThrow(/is not @user:server\/DEVICEID/);
    await expect(pins('@alice:example.org/GXNJJOQBJN=abc')).rejects.toThrow(/is not an ed25519 key/);
    await expect(pins(`@alice:example.org/GXNJJOQBJN=${key}AAAA`)).rejects.toThrow(/is not an ed25519 key/);
    // Not canonical: the last character carries bits a 32-byte key does not have.
    await expect(pins(`@alice:example.org/GXNJJOQBJN=${key.slice(0, -1)}F`)).rejects.toThrow(/is not an ed25519 key/);
  });

  it('refuses a missing secret, a display name in the allowlist, and a room above SemiTrusted', async () => {
    await expect(matrixConfigFromEnv({ ...base, AIVYX_MATRIX_TOKEN_SECRET: 'nope' }, secret)).rejects.toThrow(/"nope" is not set/);
    await expect(matrixConfigFromEnv({ ...base, AIVYX_MATRIX_ALLOWLIST: 'Alice' }, secret)).rejects.toThrow(/not a Matrix user id/);
    await expect(matrixConfigFromEnv({ ...base, AIVYX_MATRIX_ROOM_TIERS: '!a:example.org:Trusted' }, secret)).rejects.toThrow(
      /at most SemiTrusted/,
    );
    await expect(matrixConfigFromEnv({ AIVYX_MATRIX_HOMESERVER: 'https://m.example.org' }, secret)).rejects.toThrow(/AIVYX_MATRIX_USER_ID/);
  });
});

describe('resolveMatrixTier', () => {
  const self = '@aivyx:example.org';
  const alice = '@alice:example.org';
  const policy = { allowlist: [alice], roomTiers: { '!fam:x': 'SemiTrusted', '!bad:x': 'Untrusted' } as const };
  const tier = (roomId: string, sender: string, members: string[]) => resolveMatrixTier({ roomId, sender, members, self }, policy);

  it('an allowlisted user alone with the assistant is SemiTrusted; anyone else, or a third member, makes it Untrusted', () => {
    expect(tier('!dm:x', alice, [self, alice])).toBe('SemiTrusted');
    expect(tier('!dm:x', '@mallory:example.org', [self, '@mallory:example.org'])).toBe('Untrusted');
    expect(tier('!dm:x', alice, [self, alice, '@mallory:example.org'])).toBe('Untrusted');
    // The sender must be a member: a relayed claim to be Alice in a room she is not in is nothing.
    expect(tier('!dm:x', alice, [self, '@mallory:example.org'])).toBe('Untrusted');
  });

  it('per-room tiers: a SemiTrusted room lifts everyone in it to SemiTrusted at most; an Untrusted room lowers even the owner', () => {
    expect(tier('!fam:x', '@bob:example.org', [self, alice, '@bob:example.org'])).toBe('SemiTrusted');
    expect(tier('!bad:x', alice, [self, alice])).toBe('Untrusted');
  });
});

describe('waitFor a Matrix message', () => {
  const alice = '@alice:example.org';
  const facts = (from: string, room: string, tier: string) => ({ source: 'matrix' as const, from, room, tier });
  const step = (matrix: Record<string, string>) => defineStep(missionStepSpecSchema.parse({ waitFor: { matrix }, within: '1d' }));
  const match = (matrix: Record<string, string>) => (step(matrix) as { event: MissionEventMatch }).event;

  it('takes a user id and a room id, never a display name; needs "from" or "contains"', () => {
    expect(match({ from: alice, room: '!dm:example.org' })).toEqual({ source: 'matrix', from: alice, room: '!dm:example.org' });
    expect(() => step({ from: 'Alice' })).toThrow();
    expect(() => step({ room: '!dm:example.org' })).toThrow();
  });

  it('matches the sender’s exact user id (and room); words alone only from a sender who is not Untrusted', () => {
    const m = match({ from: alice, room: '!dm:x', contains: 'paid' });
    expect(eventMatches(m, facts(alice, '!dm:x', 'SemiTrusted'), 'I PAID it')).toBe(true);
    expect(match({ from: alice, room: '!Q1vI9hNqa2hRMQ8nx_V0CZp4P1c7gYnBcI2Q-kWaS3g' })).toMatchObject({ source: 'matrix' });
    expect(eventMatches(m, facts(alice, '!other:x', 'SemiTrusted'), 'paid')).toBe(false);
    expect(eventMatches(m, facts('@alice:evil.example', '!dm:x', 'SemiTrusted'), 'paid')).toBe(false);
    expect(eventMatches(m, facts(alice, '!dm:x', 'SemiTrusted'), 'not yet')).toBe(false);
    const words = match({ contains: 'paid' });
    expect(eventMatches(words, facts('@mallory:example.org', '!dm:x', 'Untrusted'), 'paid')).toBe(false);
    expect(eventMatches(words, facts(alice, '!dm:x', 'SemiTrusted'), 'paid')).toBe(true);
    // A Telegram wait is not ended by a Matrix message from the same-looking sender.
    expect(eventMatches({ source: 'telegram', from: alice }, facts(alice, '!dm:x', 'SemiTrusted'))).toBe(false);
  });
});
