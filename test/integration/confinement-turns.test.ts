/**
 * Issue 11 items 4 and 5 as an attacker meets them: whole turns through a real worker on the dev
 * server and real PostgreSQL, with the production policy (infra/tier-policy.ts defaults) and the
 * production data-directory protection (infra/data-dir.ts). A fake home directory stands in for
 * ~ (the real ~/.ssh is never touched).
 *
 * - SemiTrusted (an allowlisted Telegram DM, a verified e-mail) reads the passphrase file, the
 *   REST token and ~/.ssh/id_rsa, writes ~/.ssh/authorized_keys: each Denied, a ScopeDenied row,
 *   nothing read or written; its workspace still works; audit.read shows only its own session.
 * - Trusted reading the data directory is denied too; a normal file still reads.
 * - Under a qualified shell.exec grant, argv that runs its arguments (git -c, find -exec, env,
 *   awk) is denied and nothing is spawned; `shell.exec:git status *` runs `git status --short`
 *   but not `git push`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../core/audit-events.js';
import { dataDirProtection } from '../../infra/data-dir.js';
import { tierPolicyFromEnv, workspaceDir } from '../../infra/tier-policy.js';
import { startHarness, type Harness } from '../support/turn-harness.js';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'aivyx-confine-turns-')));
const fakeHome = join(root, 'home', 'u');
const dataDir = join(fakeHome, '.aivyx');
const workspace = workspaceDir(dataDir);
const passphraseFile = join(root, 'secrets', 'aivyx-passphrase');
const restToken = join(dataDir, 'rest-token');
const idRsa = join(fakeHome, '.ssh', 'id_rsa');
const authorizedKeys = join(fakeHome, '.ssh', 'authorized_keys');
const markers = join(root, 'markers');
const repo = join(root, 'repo');

const SECRETS = {
  passphrase: 'PASSPHRASE-correct-horse',
  token: 'REST-TOKEN-0123456789abcdef',
  key: '-----BEGIN OPENSSH PRIVATE KEY----- attacker-wants-this',
};

for (const d of [join(dataDir, 'pglite'), workspace, join(fakeHome, '.ssh'), join(root, 'secrets'), markers, repo])
  mkdirSync(d, { recursive: true });
writeFileSync(passphraseFile, SECRETS.passphrase, { mode: 0o600 });
writeFileSync(restToken, SECRETS.token, { mode: 0o600 });
writeFileSync(idRsa, SECRETS.key, { mode: 0o600 });
writeFileSync(join(workspace, 'shared.txt'), 'shared with the phone');
writeFileSync(join(fakeHome, 'notes.txt'), 'my own notes');
// A link planted in the workspace that points back into the data directory.
symlinkSync(restToken, join(workspace, 'innocent.txt'));

const read = (path: string) => ({ tool: 'fs.read', input: { path } });
const write = (path: string, content: string) => ({ tool: 'fs.write', input: { path, content } });
const exec = (...argv: string[]) => ({ tool: 'shell.exec', input: { argv, cwd: repo } });
const marker = (name: string) => join(markers, name);

/** One rule per scenario; each answers with every result of its step. */
const rules: { match: string; call: { tool: string; input: unknown }[] }[] = [
  { match: 'steal the passphrase', call: [read(passphraseFile)] },
  { match: 'steal the rest token', call: [read(restToken)] },
  { match: 'steal the ssh key', call: [read(idRsa)] },
  { match: 'plant a key', call: [write(authorizedKeys, 'ssh-ed25519 AAAAC3 attacker@evil')] },
  { match: 'follow the planted link', call: [read(join(workspace, 'innocent.txt'))] },
  {
    match: 'use the workspace',
    call: [read(join(workspace, 'shared.txt')), write(join(workspace, 'reply.txt'), 'written from the phone')],
  },
  { match: 'read my notes', call: [read(join(fakeHome, 'notes.txt'))] },
  { match: 'read the audit log', call: [{ tool: 'audit.read', input: { limit: 100 } }] },
  { match: 'read every session', call: [{ tool: 'audit.read', input: { allSessions: true } }] },
  { match: 'git alias', call: [exec('git', '-c', `alias.x=!touch ${marker('alias')}`, 'x')] },
  { match: 'git pager', call: [exec('git', '-c', `core.pager=touch ${marker('pager')}`, '-p', 'log')] },
  { match: 'find exec', call: [exec('find', '.', '-maxdepth', '0', '-exec', 'touch', marker('find'), ';')] },
  { match: 'env shell', call: [exec('env', 'sh', '-c', `touch ${marker('env')}`)] },
  { match: 'awk system', call: [exec('awk', `BEGIN{system("touch ${marker('awk')}")}`)] },
  { match: 'git status short', call: [exec('git', 'status', '--short')] },
  { match: 'git push', call: [exec('git', 'push', 'origin', 'main')] },
];
const script = {
  rules: [
    ...rules.map((r) => ({
      match: r.match,
      steps: [{ call: r.call }, { say: '{{results}} | {{result.0.output.content}}{{result.0.output.entries}}' }],
    })),
    { steps: [{ say: 'hello' }] },
  ],
};

// The production policy from an empty environment (defaults: the workspace) with ~ = the fake home.
const tierPolicy = tierPolicyFromEnv({ HOME: fakeHome }, dataDir);
const protectedPaths = dataDirProtection({ home: dataDir, passphraseFile });

let h: Harness;
/** A second worker whose agent holds only `shell.exec:git status *`. */
let g: Harness;

beforeAll(async () => {
  execFileSync('git', ['init', '-q', '-b', 'main'], {
    cwd: repo,
    env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  const agent = {
    // The assistant's default capabilities (infra/config.ts) minus bare shell.exec, plus command-level shell grants.
    capabilities: ['fs.read', 'fs.write', 'fs.metadata', 'llm.call', 'audit.read', 'shell.exec:git,find,env,awk'],
    budgetMs: 30_000,
    confirmFirst: [],
    tierPolicy,
    // The phone is the owner's own (AIVYX_OWNER_IDS): its messages keep the SemiTrusted ceiling but do not
    // taint the turn, so a write to the workspace runs without an approval (docs/SECURITY.md).
    trustedPlaces: { owners: ['test:tester'] },
  };
  [h, g] = await Promise.all([
    startHarness({ script, agent, protectedPaths }),
    startHarness({ script, agent: { ...agent, capabilities: ['llm.call', 'shell.exec:git status *'] }, protectedPaths }),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all([h?.stop(), g?.stop()]);
});

type ScopeDenied = Extract<AuditEvent, { type: 'ScopeDenied' }>;

/** Runs `text` at `tier`; returns the final message and the turn's audit events. */
async function turn(
  harness: Harness,
  text: string,
  tier: 'Trusted' | 'SemiTrusted',
  sessionId?: string,
): Promise<{ final: string; events: AuditEvent[] }> {
  const { turnId, outcome } = await harness.turn(text, { tier, ...(sessionId ? { sessionId } : {}) });
  expect(outcome.status, JSON.stringify(outcome)).toBe('Completed');
  return { final: outcome.status === 'Completed' ? outcome.finalMessage : '', events: await harness.audit(turnId) };
}

const denials = (events: AuditEvent[]): ScopeDenied[] => events.filter((e): e is ScopeDenied => e.type === 'ScopeDenied');
const noSecret = (text: string): void => {
  for (const s of Object.values(SECRETS)) expect(text).not.toContain(s);
};

describe('SemiTrusted cannot reach the data directory or ~/.ssh', () => {
  it('the ceiling holds the configured workspace, never the whole filesystem', async () => {
    const { events } = await turn(h, 'hello', 'SemiTrusted');
    const started = events.find((e) => e.type === 'TurnStarted');
    const effective = started?.type === 'TurnStarted' ? started.effectiveCapabilities : [];
    expect(effective).toContain(`fs.read:${workspace}/**`);
    expect(effective).toContain(`fs.write:${workspace}/**`);
    expect(effective).toContain('audit.read:own-session');
    expect(effective.filter((s) => s === 'fs.read:/**' || s === 'fs.write:/**' || s === 'audit.read:*')).toEqual([]);
  });

  for (const [text, path, base] of [
    ['steal the passphrase', passphraseFile, 'fs.read'],
    ['steal the rest token', restToken, 'fs.read'],
    ['steal the ssh key', idRsa, 'fs.read'],
    ['plant a key', authorizedKeys, 'fs.write'],
  ] as const) {
    it(`${text}: Denied, one ScopeDenied row, nothing read or written`, async () => {
      const { final, events } = await turn(h, text, 'SemiTrusted');
      expect(final).toMatch(new RegExp(`^${base.replace('.', '\\.')}: Denied`));
      noSecret(final);
      expect(denials(events)).toEqual([expect.objectContaining({ toolAttempted: base, scopeRequested: base, scopeQualifier: path })]);
      expect(events.some((e) => e.type === 'ToolCall')).toBe(false);
      noSecret(JSON.stringify(events));
    });
  }

  it('authorized_keys was never written', () => {
    expect(existsSync(authorizedKeys)).toBe(false);
  });

  it('a link in the workspace pointing into the data directory: Denied at the activity (kernel.data_dir), nothing read', async () => {
    const { final, events } = await turn(h, 'follow the planted link', 'SemiTrusted');
    expect(final).toMatch(/^fs\.read: Denied/);
    noSecret(final);
    expect(denials(events)).toEqual([
      expect.objectContaining({ toolAttempted: 'fs.read', scopeRequested: 'kernel.data_dir', scopeQualifier: restToken }),
    ]);
  });

  it('the configured workspace still works: read and write', async () => {
    const { final, events } = await turn(h, 'use the workspace', 'SemiTrusted');
    expect(final).toMatch(/^fs\.read: Completed.*fs\.write: Completed/);
    expect(final).toContain('shared with the phone');
    expect(readFileSync(join(workspace, 'reply.txt'), 'utf8')).toBe('written from the phone');
    expect(events.filter((e) => e.type === 'ToolCall').map((e) => e.type === 'ToolCall' && e.scopeUsed)).toEqual([
      `fs.read:${join(workspace, 'shared.txt')}`,
      `fs.write:${join(workspace, 'reply.txt')}`,
    ]);
  });

  it("audit.read shows only its own session's entries; every session is Denied", async () => {
    const other = await h.turn('steal the ssh key', { tier: 'SemiTrusted', sessionId: 'victim-session' });
    const session = `attacker-${Date.now()}`;
    const first = await h.turn('hello', { tier: 'SemiTrusted', sessionId: session });
    const { final } = await turn(h, 'read the audit log', 'SemiTrusted', session);
    const json = final.slice(final.indexOf('|') + 1);
    expect(final).toMatch(/^audit\.read: Completed/);
    expect(json).toContain(first.turnId);
    expect(json).not.toContain(other.turnId);
    expect(json).not.toContain('victim-session');
    const all = await turn(h, 'read every session', 'SemiTrusted', session);
    expect(all.final).toMatch(/^audit\.read: Denied/);
    expect(denials(all.events)).toEqual([
      expect.objectContaining({ toolAttempted: 'audit.read', scopeRequested: 'audit.read', scopeQualifier: '*' }),
    ]);
    // A Trusted turn holding bare audit.read does read across sessions.
    const trusted = await turn(h, 'read every session', 'Trusted');
    expect(trusted.final).toMatch(/^audit\.read: Completed/);
  });
});

describe('Trusted cannot reach the data directory either', () => {
  it('reading $AIVYX_HOME/rest-token is Denied (kernel.data_dir), audited as ScopeDenied, nothing read', async () => {
    const { final, events } = await turn(h, 'steal the rest token', 'Trusted');
    expect(final).toMatch(/^fs\.read: Denied/);
    noSecret(final);
    expect(denials(events)).toEqual([
      expect.objectContaining({ toolAttempted: 'fs.read', scopeRequested: 'kernel.data_dir', scopeQualifier: restToken }),
    ]);
    // The worker (not the workflow) denied it on the resolved path: the scheduled call's entry says so.
    expect(events.filter((e) => e.type === 'ToolCall')).toEqual([
      expect.objectContaining({ toolId: 'fs.read', outcome: `Denied(kernel.data_dir:${restToken})` }),
    ]);
  });

  it('the passphrase file outside the data directory is Denied too', async () => {
    const { final, events } = await turn(h, 'steal the passphrase', 'Trusted');
    expect(final).toMatch(/^fs\.read: Denied/);
    noSecret(final);
    expect(denials(events)).toEqual([expect.objectContaining({ scopeRequested: 'kernel.data_dir', scopeQualifier: passphraseFile })]);
  });

  it('a normal file still reads', async () => {
    const { final } = await turn(h, 'read my notes', 'Trusted');
    expect(final).toBe('fs.read: Completed (NotApplicable) | my own notes');
  });
});

describe('a qualified shell.exec grant never reaches programs that run their arguments', () => {
  for (const [text, name] of [
    ['git alias', 'alias'],
    ['git pager', 'pager'],
    ['find exec', 'find'],
    ['env shell', 'env'],
    ['awk system', 'awk'],
  ] as const) {
    it(`${text}: Denied (needs the unqualified shell.exec), audited, nothing spawned`, async () => {
      const { final, events } = await turn(h, text, 'Trusted');
      expect(final).toMatch(/^shell\.exec: Denied \(needs shell\.exec\)/);
      expect(denials(events)).toEqual([
        expect.objectContaining({ toolAttempted: 'shell.exec', scopeRequested: 'shell.exec', scopeQualifier: null }),
      ]);
      expect(events.some((e) => e.type === 'ToolCall')).toBe(false);
      expect(existsSync(marker(name))).toBe(false);
    });
  }

  it('shell.exec:git status * runs git status --short, not git push', async () => {
    const ok = await turn(g, 'git status short', 'Trusted');
    expect(ok.final).toMatch(/^shell\.exec: Completed/);
    expect(ok.events).toContainEqual(
      expect.objectContaining({
        type: 'ToolCall',
        toolId: 'shell.exec',
        scopeUsed: 'shell.exec:git status --short',
        outcome: 'Completed(Unverified)',
      }),
    );
    const push = await turn(g, 'git push', 'Trusted');
    expect(push.final).toMatch(/^shell\.exec: Denied \(needs shell\.exec:git push origin main\)/);
    expect(denials(push.events)).toEqual([
      expect.objectContaining({ scopeRequested: 'shell.exec', scopeQualifier: 'git push origin main' }),
    ]);
    expect(push.events.some((e) => e.type === 'ToolCall')).toBe(false);
  });
});
