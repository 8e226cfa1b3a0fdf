/** The SemiTrusted ▲ policy from the environment: safe defaults, ~ expansion, "none", and errors naming the variable. */
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tierCeiling } from '../../core/capability/index.js';
import { AivyxError } from '../../core/errors.js';
import { loadConfig } from '../../infra/config.js';
import { tierPolicyFromEnv } from '../../infra/tier-policy.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aivyx-policy-')));
const home = join(root, 'data');
const me = join(root, 'me');
mkdirSync(join(me, 'Shared'), { recursive: true });

function configError(env: NodeJS.ProcessEnv): AivyxError {
  try {
    tierPolicyFromEnv({ HOME: me, ...env }, home);
  } catch (e) {
    expect(e).toBeInstanceOf(AivyxError);
    return e as AivyxError;
  }
  throw new Error('accepted');
}

describe('tierPolicyFromEnv', () => {
  it('defaults: fs and git to the workspace under the data directory, nothing else', () => {
    expect(tierPolicyFromEnv({ HOME: me }, home).semiTrusted).toEqual({
      'fs.read': [`${home}/workspace/**`],
      'fs.write': [`${home}/workspace/**`],
      'git.read': [`${home}/workspace/**`],
      'net.post': [],
      'channel.send': [],
      'channel.receive': [],
      'memory.forget': [],
      'mission.create': [],
      'mission.list': [],
      'mission.cancel': [],
    });
  });

  it('~ is the home directory, lists are comma-separated, read-only folders add to fs.read only', () => {
    const p = tierPolicyFromEnv(
      {
        HOME: me,
        AIVYX_SEMITRUSTED_FS: '~/Shared/**, /srv/drop/*.txt',
        AIVYX_SEMITRUSTED_FS_READ: '~/Public/**',
        AIVYX_SEMITRUSTED_NET_POST: 'https://hooks.example.com/aivyx',
        AIVYX_SEMITRUSTED_CHANNEL_SEND: 'telegram',
        AIVYX_SEMITRUSTED_MEMORY_FORGET: 'topic:scratch,session:*',
      },
      home,
    );
    expect(p.semiTrusted['fs.read']).toEqual([`${me}/Shared/**`, '/srv/drop/*.txt', `${me}/Public/**`]);
    expect(p.semiTrusted['fs.write']).toEqual([`${me}/Shared/**`, '/srv/drop/*.txt']);
    expect(p.semiTrusted['net.post']).toEqual(['https://hooks.example.com/aivyx']);
    expect(p.semiTrusted['channel.send']).toEqual(['telegram']);
    expect(p.semiTrusted['memory.forget']).toEqual(['topic:scratch', 'session:*']);
    const ceiling = tierCeiling('SemiTrusted', p);
    expect(ceiling.grants(`fs.write:${me}/Shared/a.txt`)).toBe(true);
    expect(ceiling.grants(`fs.write:${me}/Public/a.txt`)).toBe(false);
    expect(ceiling.grants(`fs.read:${me}/.ssh/id_rsa`)).toBe(false);
  });

  it('an empty value means none: the base is absent from the SemiTrusted ceiling', () => {
    const p = tierPolicyFromEnv({ HOME: me, AIVYX_SEMITRUSTED_FS: '', AIVYX_SEMITRUSTED_GIT: '' }, home);
    const ceiling = tierCeiling('SemiTrusted', p);
    expect(ceiling.toJSON().filter((s) => /^(fs\.read|fs\.write|git\.read)/.test(s))).toEqual([]);
  });

  it('symlinks in the literal part of a path are resolved, so the grant matches the real paths tools check', () => {
    symlinkSync(join(me, 'Shared'), join(me, 'shared-link'));
    expect(tierPolicyFromEnv({ HOME: me, AIVYX_SEMITRUSTED_FS: '~/shared-link/**' }, home).semiTrusted['fs.read']).toEqual([
      `${me}/Shared/**`,
    ]);
  });

  it('refuses bad values with a Config error naming the variable', () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ AIVYX_SEMITRUSTED_FS: 'Shared/**' }, /AIVYX_SEMITRUSTED_FS: "Shared\/\*\*" is not an absolute path/],
      [{ AIVYX_SEMITRUSTED_FS: '/**' }, /AIVYX_SEMITRUSTED_FS: .*all of fs\.read/],
      [{ AIVYX_SEMITRUSTED_GIT: '/a/x**' }, /AIVYX_SEMITRUSTED_GIT: .*"\*\*" must be a whole segment/],
      [{ AIVYX_SEMITRUSTED_NET_POST: '*' }, /AIVYX_SEMITRUSTED_NET_POST: .*all of net\.post/],
      [{ AIVYX_SEMITRUSTED_NET_POST: 'http://user@evil.example/' }, /AIVYX_SEMITRUSTED_NET_POST: /],
      [{ AIVYX_SEMITRUSTED_CHANNEL_SEND: '*' }, /AIVYX_SEMITRUSTED_CHANNEL_SEND: .*all of channel\.send/],
      [{ AIVYX_SEMITRUSTED_MEMORY_FORGET: '*' }, /AIVYX_SEMITRUSTED_MEMORY_FORGET: .*all of memory\.forget/],
    ];
    for (const [env, message] of cases) {
      const e = configError(env);
      expect(e.kind, JSON.stringify(env)).toBe('Config');
      expect(e.message, JSON.stringify(env)).toMatch(message);
      expect(e.hint, JSON.stringify(env)).toBeTruthy();
    }
  });

  it('is part of the configuration (AIVYX_HOME decides the default workspace)', () => {
    const config = loadConfig({ AIVYX_HOME: home, HOME: me }, root);
    expect(config.tierPolicy.semiTrusted['fs.write']).toEqual([`${home}/workspace/**`]);
    expect(() => loadConfig({ AIVYX_HOME: home, HOME: me, AIVYX_SEMITRUSTED_FS: 'relative' }, root)).toThrow(/AIVYX_SEMITRUSTED_FS/);
  });
});
