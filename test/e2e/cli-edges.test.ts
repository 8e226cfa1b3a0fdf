/**
 * The CLI without rough edges (issue #32 items 4–8), through real processes as a person would use it:
 * reminders in one line (`--in`, `--at` in a time zone, `--say`) and the documented `capabilities`
 * field; short ids and `aivyx approve|deny` with no id; the words (`inbox` notices, `mission list/show`,
 * tool outcomes, honest counts, "did you mean"); `chat -m` sessions that close, a REPL that carries on;
 * and on a fresh install the passphrase prompts (NEW, asked again) and `secrets set` before any `up`.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { aivyx, cliEnv, spawnAivyx, untilAivyx, type AivyxProcess } from '../support/cli-process.js';

const home = mkdtempSync(join(tmpdir(), 'aivyx-cli-edges-'));
const script = join(home, 'script.json');
writeFileSync(
  script,
  JSON.stringify({
    rules: [
      {
        regex: '^read\\s+(\\S+)$',
        steps: [{ call: [{ tool: 'fs.read', input: { path: '{{match.1}}' } }] }, { say: 'read it', sayOnFailure: 'could not read it' }],
      },
      {
        match: 'fetch',
        steps: [{ call: [{ tool: 'net.fetch', input: { url: 'https://example.com/' } }] }, { say: 'fetched', sayOnFailure: 'not fetched' }],
      },
      { regex: '^run\\s+(\\S+)$', steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['{{match.1}}'] } }] }, { say: 'ran' }] },
      { steps: [{ say: 'ok' }] },
    ],
  }),
);

let up: ChildProcess | undefined;
afterAll(() => {
  up?.kill('SIGKILL');
});

/** Resolves once `text` has appeared `n` times in `p`'s output. */
async function waitForNth(p: AivyxProcess, text: string, n: number, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (p.output().split(text).length - 1 < n) {
    if (Date.now() > end) throw new Error(`"${text}" did not appear ${n} times; output so far:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The exit code of `p` once it ends. */
const exited = (p: AivyxProcess): Promise<number | null> =>
  p.child.exitCode !== null ? Promise.resolve(p.child.exitCode) : new Promise((r) => p.child.once('exit', r));

/** Tomorrow's date (YYYY-MM-DD) in `tz`. */
function tomorrowIn(tz: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }).format(Date.now());
  const [y, m, d] = parts.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

describe('aivyx CLI edges', () => {
  it('an unknown command: one line naming the closest command, not the whole usage', () => {
    const r = aivyx(['sesions'], { ...process.env, AIVYX_HOME: join(home, 'unused') });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('aivyx: unknown command "sesions" — did you mean "sessions"?\n');
    expect(aivyx(['frobnicate'], { ...process.env, AIVYX_HOME: join(home, 'unused') }).stderr).toBe(
      'aivyx: unknown command "frobnicate" (aivyx help lists them)\n',
    );
  });

  it('reminders, capabilities, short ids, approve without an id, the words, sessions that close and a REPL that carries on', async () => {
    const env = await cliEnv(home, script, { AIVYX_TIME_ZONE: 'Asia/Tokyo' });
    const started = spawnAivyx(['up'], env);
    up = started.child;
    await started.waitFor('aivyx is up', 120_000);

    // ── item 4: a reminder in one line; the notice lands in the inbox as a notice. ──
    const tea = aivyx(['mission', 'create', '--in', '2s', '--say', 'tea is ready'], env);
    expect(tea.stderr).toBe('');
    const teaId = tea.stdout.trim();
    expect(teaId).toMatch(/^mission-[0-9a-f-]{36}$/);
    const short = teaId.slice('mission-'.length, 'mission-'.length + 8);
    // Item 5 and 6: a short id, and "step 2 of 2" as the UI says it (not "step 3, 2 step runs").
    const done = await untilAivyx(['mission', 'show', short], env, (s) => s.includes(': completed\n'), 60_000);
    expect(done).toBe(`mission ${teaId}: completed\n  step 2 of 2 (2 step runs so far)\n`);
    const listed = await untilAivyx(['mission', 'list'], env, (s) => s.includes(`${teaId}  completed`));
    expect(listed).toMatch(new RegExp(`${teaId}  completed  \\(started \\S+\\)\\n`));
    expect(listed).not.toContain('(completed');
    const inbox = aivyx(['inbox'], env).stdout;
    expect(inbox).toContain(`notice from mission ${teaId} (turn ${teaId}/step-1/notice)\n  tea is ready\n`);
    expect(inbox).not.toContain('not delivered');

    // --at in a zone: --time-zone, else AIVYX_TIME_ZONE; the wait says the local time and zone.
    const bank = aivyx(['mission', 'create', '--at', 'tomorrow 09:00', '--time-zone', 'Europe/Berlin', '--say', 'call the bank'], env);
    expect(bank.stderr).toBe('');
    const bankId = bank.stdout.trim();
    const bankShown = await untilAivyx(['mission', 'show', bankId], env, (s) => s.includes('waiting: a timer'));
    expect(bankShown).toMatch(new RegExp(`\\(wait until ${tomorrowIn('Europe/Berlin')}T09:00:00\\+0[12]:00 \\(Europe/Berlin\\)\\)`));
    expect(bankShown).toContain('  step 1 of 2 (0 step runs so far)');
    const tokyo = aivyx(['mission', 'create', '--at', 'tomorrow 09:00', '--say', 'stand-up'], env).stdout.trim();
    expect(await untilAivyx(['mission', 'show', tokyo], env, (s) => s.includes('waiting: a timer'))).toContain(
      `(wait until ${tomorrowIn('Asia/Tokyo')}T09:00:00+09:00 (Asia/Tokyo))`,
    );
    const past = aivyx(['mission', 'create', '--at', '2020-01-01 09:00', '--say', 'too late'], env);
    expect(past.status).toBe(1);
    expect(past.stderr).toMatch(/--at "2020-01-01 09:00" is in the past/);
    for (const id of [bankId, tokyo])
      expect(aivyx(['mission', 'cancel', id.slice(8, 20)], env).stdout).toBe(`mission ${id}: cancel requested\n`);

    // The documented `capabilities` field: a spec file as docs/MISSIONS.md writes it; it only narrows.
    const file = join(home, 'notes.json');
    writeFileSync(
      file,
      JSON.stringify({ goal: 'tidy notes', steps: [{ wait: '1h' }, 'summarise my notes'], capabilities: ['fs.read:/etc/**'] }),
    );
    const narrowed = aivyx(['mission', 'create', file], env);
    expect(narrowed.stderr).toBe('');
    const narrowedId = narrowed.stdout.trim();
    writeFileSync(file, JSON.stringify({ goal: 'post it', capabilities: ['net.post:https://example.com'] }));
    const wider = aivyx(['mission', 'create', file], env);
    expect(wider.status).toBe(1);
    expect(wider.stderr).toMatch(
      /field "capabilities": the assistant does not hold net\.post:https:\/\/example\.com\/, so no mission of it can/,
    );
    const audit = aivyx(['audit', 'tail', '-n', '500', '--json'], env)
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { eventType: string; event: { missionId?: string; capabilities?: string[] } });
    const startedWith = (id: string) => audit.find((e) => e.eventType === 'MissionStarted' && e.event.missionId === id)?.event.capabilities;
    expect(startedWith(narrowedId)).toEqual(['fs.read:/etc/**']);
    // A reminder runs no tools: it holds none.
    expect(startedWith(teaId)).toEqual([]);
    expect(aivyx(['mission', 'cancel', narrowedId], env).status).toBe(0);

    // An ambiguous start is refused, listing the missions it could mean.
    const ambiguous = aivyx(['mission', 'show', 'mission-'], env);
    expect(ambiguous.status).toBe(1);
    expect(ambiguous.stderr).toMatch(/"mission-" matches \d+ mission ids:\n {2}mission-/);
    expect(ambiguous.stderr).toContain(`  ${teaId}`);

    // ── item 6: tool outcomes in words, honest counts. ──
    const read = aivyx(['chat', '-m', 'read /etc/hostname'], env);
    expect(read.status).toBe(0);
    expect(read.stderr).toContain('· fs.read → done\n');
    expect(read.stderr).toMatch(/\[Completed · 1 tool ran · \d+ ms/);
    expect(read.stderr).not.toMatch(/Completed\(|tool call\(s\)/);
    // A turn by its start too: `chat --follow` and the first characters of the id chat printed.
    const readTurn = /· turn turn\/cli\/([0-9a-f-]{36})/.exec(read.stderr)?.[1];
    expect(readTurn, read.stderr).toBeDefined();
    const followed = await untilAivyx(['chat', '--follow', readTurn!.slice(0, 8)], env, () => true);
    expect(followed).toContain('read it');
    expect(aivyx(['chat', '--follow', readTurn!.slice(0, 8)], env).stderr).toContain(`· turn turn/cli/${readTurn!} (completed)`);
    const missing = aivyx(['chat', '-m', 'read /etc/no-such-file-here'], env);
    expect(missing.stdout).toContain('could not read it');
    expect(missing.stderr).toMatch(/\[Completed · 1 tool ran \(it failed\) · \d+ ms/);
    const refused = aivyx(['chat', '-m', 'fetch the page'], env);
    expect(refused.stdout).toContain('not fetched');
    expect(refused.stderr).toMatch(/\[Completed · no tool ran, 1 call refused · \d+ ms/);

    // ── item 7: every chat -m above closed its session once its turn ended. ──
    expect(await untilAivyx(['sessions'], env, (s) => s.startsWith('no open sessions'), 30_000)).toMatch(/^no open sessions/);
    // The REPL carries on its last session; --new starts another.
    const repl = (...args: string[]) => aivyx(['chat', ...args], env, '/exit\n').stderr.split('\n')[0] ?? '';
    const first = /^session (cli-[0-9a-f-]{36}) — type a message/.exec(repl())?.[1];
    expect(first).toBeDefined();
    expect(repl()).toBe(
      `continuing session ${first!} (aivyx chat --new starts a new one) — type a message; Ctrl-C cancels a running turn; /clear starts afresh`,
    );
    const second = /^session (cli-[0-9a-f-]{36}) — /.exec(repl('--new'))?.[1];
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(repl()).toContain(`continuing session ${second!} `);

    // ── item 5: approve / deny without an id. ──
    const none = aivyx(['approve'], env);
    expect(none.status).toBe(1);
    expect(none.stderr).toContain('nothing is waiting for your approval');
    for (const cmd of ['run uname', 'run id']) expect(aivyx(['chat', '-m', cmd], env).status).toBe(3);
    await untilAivyx(['approvals'], env, (s) => s.split('\n').filter((l) => l.startsWith('mission ')).length === 2, 30_000);
    const two = aivyx(['approve'], env);
    expect(two.status).toBe(1);
    const offered = [...two.stderr.matchAll(/ {2}aivyx approve ([0-9a-f]{8}) {3}shell\.exec \(mission (mission-confirm-[0-9a-f]{32})\)/g)];
    expect(offered, two.stderr).toHaveLength(2);
    expect(two.stderr).toMatch(/2 gates are waiting for you; say which/);
    const [denyShort, denyMission] = [offered[0]![1]!, offered[0]![2]!];
    expect(aivyx(['deny', denyShort, '--reason', 'not now'], env).stdout).toBe(`gate ${denyMission}/gate-1: denied\n`);
    const approved = aivyx(['approve'], env);
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toBe(`gate ${offered[1]![2]!}/gate-1: approved\n`);
    expect(aivyx(['mission', 'approve'], env).stderr).toContain('nothing is waiting for your approval');

    up.kill('SIGINT');
    await new Promise((r) => up!.once('exit', r));
  }, 420_000);

  it('a fresh install at a terminal: secrets set makes the data directory, the first prompt sets a NEW passphrase, a wrong one is asked again', async () => {
    const fresh = join(home, 'not-yet', 'home');
    const env = await cliEnv(fresh, script);
    delete env.AIVYX_PASSPHRASE;
    const set = spawnAivyx(['secrets', 'set', 'FOO'], env, { pty: true });
    const typeSet = (s: string) => set.child.stdin?.write(`${s}\r`);
    try {
      await set.waitFor('new install — choose a NEW passphrase', 120_000);
      typeSet('correct horse');
      await set.waitFor('type the new passphrase again: ');
      typeSet('correct hors'); // a typo: asked again, nothing created
      await set.waitFor('the two differ — choose it again (try 2 of 3): ');
      typeSet('correct horse');
      await waitForNth(set, 'type the new passphrase again: ', 2);
      typeSet('correct horse');
      await set.waitFor('value for FOO: ');
      typeSet('s3cret');
      await set.waitFor('secret FOO stored (sealed)');
      expect(await exited(set)).toBe(0);
    } finally {
      set.child.kill('SIGKILL');
    }
    // Made as `aivyx up` makes it: owner-only, with its workspace.
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    expect(existsSync(join(fresh, 'workspace'))).toBe(true);

    const list = spawnAivyx(['secrets', 'list'], env, { pty: true });
    const typeList = (s: string) => list.child.stdin?.write(`${s}\r`);
    try {
      await list.waitFor('aivyx passphrase: ', 120_000);
      typeList('wrong horse');
      await list.waitFor('wrong passphrase — try again (2 of 3): ', 60_000);
      typeList('correct horse');
      await list.waitFor('FOO', 60_000);
      expect(await exited(list)).toBe(0);
    } finally {
      list.child.kill('SIGKILL');
    }

    const locked = spawnAivyx(['secrets', 'list'], env, { pty: true });
    try {
      for (let n = 1; n <= 3; n++) {
        await waitForNth(locked, n === 1 ? 'aivyx passphrase: ' : `try again (${n} of 3): `, 1, 120_000);
        locked.child.stdin?.write('wrong horse\r');
      }
      await locked.waitFor('3 wrong passphrases: nothing was opened', 60_000);
      expect(await exited(locked)).toBe(1);
      expect(locked.output()).not.toContain('FOO');
    } finally {
      locked.child.kill('SIGKILL');
    }
  }, 360_000);
});
