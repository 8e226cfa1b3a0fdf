/**
 * The quick start's promise (README.md, docs/USING.md), end to end through real processes: `aivyx up`
 * on the embedded defaults (dev server + PGlite), `aivyx chat -m` against it, `aivyx audit verify|tail`, then
 * `aivyx chat --standalone -m` on its own once `up` has stopped, and the errors a person sees.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { aivyx, cliEnv, spawnAivyx, untilAivyx } from '../support/cli-process.js';

const home = mkdtempSync(join(tmpdir(), 'aivyx-e2e-'));
const script = join(home, 'script.json');
writeFileSync(
  script,
  JSON.stringify({
    rules: [
      { match: 'hello', steps: [{ say: 'Hello from aivyx!' }] },
      {
        match: 'run',
        steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['echo', 'hi'] } }] }, { say: 'ran: {{result.0.output.stdout}}' }],
      },
    ],
  }),
);

const baseEnv = () => cliEnv(home, script);

/** Points `env`'s model at a scripted model of its own (written to `name` in the test's home). */
function useScript(env: NodeJS.ProcessEnv, name: string, model: { rules: unknown[] }): void {
  const file = join(home, name);
  writeFileSync(file, JSON.stringify(model));
  env.AIVYX_LLM = `scripted:${file}`;
}

let up: ChildProcess | undefined;
afterAll(() => {
  up?.kill('SIGKILL');
});

describe('aivyx CLI', () => {
  it('up → chat -m → audit verify/tail → stop → chat -m standalone', async () => {
    const env = await baseEnv();
    const started = spawnAivyx(['up'], env);
    up = started.child;
    await started.waitFor('aivyx is up');
    const out = started.output();
    expect(out).toMatch(/Temporal UI: +http:\/\/127\.0\.0\.1:\d+/);

    // The UI is pointed at our codec server; an operator signs in once and the cookie lets the UI decode.
    const codecUrl = /Codec server: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    // A stable, configured port (bookmarkable), not whatever was free.
    expect(codecUrl).toBe(`http://127.0.0.1:${env.AIVYX_CODEC_PORT}`);
    const uiUrl = /Temporal UI: +(http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    const settings = (await (await fetch(`${uiUrl}/api/v1/settings`)).json()) as { Codec?: { Endpoint?: string } };
    expect(settings.Codec?.Endpoint).toBe(codecUrl);
    const token = readFileSync(join(home, 'codec-token'), 'utf8').trim();
    const wrong = await fetch(`${codecUrl}/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'x'.repeat(64) }),
      redirect: 'manual',
    });
    expect(wrong.status).toBe(401);
    const login = await fetch(`${codecUrl}/login`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toContain(token);
    const decode = (headers: Record<string, string>) =>
      fetch(`${codecUrl}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ payloads: [] }),
      });
    expect((await decode({})).status).toBe(401);
    expect((await decode({ cookie: cookie.split(';')[0] ?? '' })).status).toBe(200);

    const chat = aivyx(['chat', '-m', 'hello there'], env);
    expect(chat.stdout).toContain('Hello from aivyx!');
    expect(chat.stderr).toContain('[Completed');
    expect(chat.status).toBe(0);
    // The conversation it opened is listed (until it has been idle for a day).
    const open = aivyx(['sessions', '--json'], env);
    expect(open.status).toBe(0);
    const listed = open.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { sessionWorkflowId: string });
    expect(listed.some((s) => s.sessionWorkflowId.startsWith('session/cli/'))).toBe(true);

    // Confirm-first is on by default: shell.exec asks first, and the turn names the gate that decides it.
    const ran = aivyx(['chat', '-m', 'run something'], env);
    expect(ran.stderr).toContain('[Escalated: shell.exec needs approval');
    expect(ran.stdout).not.toContain('ran: hi');
    expect(ran.status).toBe(3);
    const gateId = /approval needed: gate (mission-confirm-[0-9a-f]{32}\/gate-1)/.exec(ran.stderr)?.[1];
    expect(gateId, ran.stderr).toBeDefined();
    const missionId = gateId!.split('/')[0]!;
    expect(aivyx(['mission', 'approve', gateId!], env).stdout).toContain(`gate ${gateId}: approved`);
    // The rerun with the one-shot grant runs exactly the approved call, once.
    await untilAivyx(['mission', 'show', missionId], env, (s) => s.includes(': completed\n'), 60_000);

    const verify = aivyx(['audit', 'verify'], env);
    expect(verify.stdout).toMatch(/audit chain OK: \d+ entries/);
    expect(verify.status).toBe(0);
    const tail = aivyx(['audit', 'tail', '-n', '40', '--json'], env);
    const events = tail.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event: Record<string, unknown> }).event);
    const calls = events.filter((e) => e.type === 'ToolCall' && e.toolId === 'shell.exec');
    expect(calls.map((e) => String(e.outcome).split('(')[0])).toEqual(['RequiresEscalation', 'Completed']);
    expect(calls[1]?.inputHash).toBe(calls[0]?.inputHash);
    expect(events.find((e) => e.type === 'GateApproved' && e.missionId === missionId)).toMatchObject({
      approver: 'local-user',
      approverChannel: 'cli',
    });
    expect(events.at(-1)?.type).toBe('MissionEnded');

    up.kill('SIGINT');
    await new Promise((r) => up?.once('exit', r));
    expect(existsSync(join(home, 'running.json'))).toBe(false);

    // Without `up`, chat refuses to start a stack behind your back; with --standalone it runs on its
    // own stack on the same data directory, and audit continues the chain.
    const refused = aivyx(['chat', '-m', 'hello again'], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/no aivyx up is running on .*--standalone/);
    const alone = aivyx(['chat', '--standalone', '-m', 'hello again'], env);
    expect(alone.stdout).toContain('Hello from aivyx!');
    expect(alone.status).toBe(0);
    const again = aivyx(['audit', 'verify'], env);
    expect(again.stdout).toMatch(/audit chain OK/);

    // Secrets are stored sealed and listed by name only.
    const set = aivyx(['secrets', 'set', 'OPENAI_API_KEY'], env, 'sk-very-secret-value\n');
    expect(set.status).toBe(0);
    const list = aivyx(['secrets', 'list'], env);
    expect(list.stdout).toContain('OPENAI_API_KEY');
    expect(list.stdout).not.toContain('sk-very-secret-value');
    const bad = aivyx(['secrets', 'set', 'not a name'], env, 'x\n');
    expect(bad.status).not.toBe(0);

    // Key rotation re-seals every row; the assistant keeps working on the rotated store.
    const rotate = aivyx(['storage', 'rotate-keys'], env);
    expect(rotate.status).toBe(0);
    const after = aivyx(['chat', '--standalone', '-m', 'hello after rotation'], env);
    expect(after.stdout).toContain('Hello from aivyx!');

    // A new passphrase (stdin's first line): the old one stops working, everything sealed still opens.
    const change = aivyx(['passphrase', 'change'], env, 'a brand new passphrase\n');
    expect(change.stdout).toMatch(/^passphrase changed/);
    expect(change.status).toBe(0);
    const old = aivyx(['secrets', 'list'], env);
    expect(old.status).not.toBe(0);
    expect(old.stderr).toMatch(/wrong passphrase/);
    const renewed = { ...env, AIVYX_PASSPHRASE: 'a brand new passphrase' };
    expect(aivyx(['secrets', 'list'], renewed).stdout).toContain('OPENAI_API_KEY');
    expect(aivyx(['audit', 'verify'], renewed).stdout).toMatch(/audit chain OK/);
    expect(aivyx(['chat', '--standalone', '-m', 'hello after the change'], renewed).stdout).toContain('Hello from aivyx!');
    // And back (the other tests share this data directory).
    expect(aivyx(['passphrase', 'change'], renewed, `${env.AIVYX_PASSPHRASE}\n`).status).toBe(0);
    expect(aivyx(['secrets', 'list'], env).stdout).toContain('OPENAI_API_KEY');
  }, 300_000);

  it('a wrong passphrase is a clear error and writes nothing', async () => {
    const env = { ...(await baseEnv()), AIVYX_PASSPHRASE: 'not the passphrase' };
    const r = aivyx(['audit', 'verify'], env);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/wrong passphrase/);
  }, 120_000);

  it('refuses to start without any passphrase source and says how to give one', async () => {
    const env = await baseEnv();
    delete env.AIVYX_PASSPHRASE;
    const r = aivyx(['audit', 'verify'], env, '');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/AIVYX_PASSPHRASE/);
  }, 60_000);
});

describe('aivyx chat REPL', () => {
  it('Ctrl-C cancels the running turn, not the process; /exit quits', async () => {
    const env = await baseEnv();
    useScript(env, 'repl-script.json', {
      rules: [
        { match: 'slow', steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['sleep', '2'] } }] }, { say: 'should not be said' }] },
        { steps: [{ say: 'still here' }] },
      ],
    });
    // This test is about Ctrl-C during a running tool, so the tool must run without asking first.
    env.AIVYX_CONFIRM_DESTRUCTIVE = 'off';
    const repl = spawnAivyx(['chat', '--standalone'], env);
    const chat = repl.child;
    const waitFor = (text: string) => repl.waitFor(text);
    const output = () => repl.output();
    await waitFor('type a message');
    chat.stdin?.write('slow please\n');
    await waitFor('running shell.exec');
    chat.kill('SIGINT');
    await waitFor('[Cancelled');
    expect(output()).not.toContain('should not be said');
    chat.stdin?.write('anything\n');
    await waitFor('still here');
    chat.stdin?.write('/exit\n');
    const code = await new Promise<number | null>((r) => chat.once('exit', r));
    expect(code).toBe(0);
  }, 180_000);
});

describe('aivyx chat REPL: notices as they arrive', () => {
  it('"remind me in a few seconds to stretch": the whole reminder is asked about inline, and its notice appears in the REPL when it fires', async () => {
    const env = await baseEnv();
    useScript(env, 'remind-script.json', {
      rules: [
        {
          match: 'remind me',
          steps: [
            {
              call: [{ tool: 'mission.create', input: { goal: 'stretch', steps: [{ wait: '4s' }, { notify: 'time to stretch' }] } }],
            },
            { say: 'reminder set' },
          ],
        },
        { steps: [{ say: 'ok' }] },
      ],
    });
    // mission.create is in the default capabilities and confirm-first by default.
    const repl = spawnAivyx(['chat', '--standalone'], env, { pty: true });
    const type = (line: string) => repl.child.stdin?.write(`${line}\r`);
    try {
      await repl.waitFor('type a message', 120_000);
      type('remind me in a few seconds to stretch');
      await repl.waitFor('approve? [y/N/details]');
      expect(repl.output()).toContain('step 1: wait 4s');
      expect(repl.output()).toContain('step 2: notify the owner "time to stretch"');
      type('y');
      await repl.waitFor('reminder set');
      const before = repl.output().length;
      await repl.waitFor('· inbox', 60_000);
      expect(repl.output().slice(before)).toMatch(/· inbox [0-9a-f]+ \(cli, mission-[0-9a-f]{32}\/step-1\/notice\): time to stretch/);
      type('/exit');
      expect(await new Promise<number | null>((r) => repl.child.once('exit', r))).toBe(0);
    } finally {
      repl.child.kill('SIGKILL');
    }
  }, 240_000);
});

describe('aivyx chat REPL at a terminal: approving inline', () => {
  it('run uname -a → the exact call and a prompt → y: the output appears in the same session; n: denied, nothing runs', async () => {
    const env = await baseEnv();
    useScript(env, 'approve-script.json', {
      rules: [
        {
          match: 'run uname',
          steps: [{ call: [{ tool: 'shell.exec', input: { argv: ['uname', '-s'] } }] }, { say: 'uname says: {{result.0.output.stdout}}' }],
        },
        { steps: [{ say: 'ok' }] },
      ],
    });
    // shell.exec is confirm-first by default: the REPL must ask, and only a yes runs it.
    const repl = spawnAivyx(['chat', '--standalone'], env, { pty: true });
    const type = (line: string) => repl.child.stdin?.write(`${line}\r`);
    const count = (text: string) => repl.output().split(text).length - 1;
    try {
      await repl.waitFor('type a message', 120_000);
      type('run uname -a');
      await repl.waitFor('approve? [y/N/details]');
      // The owner sees the exact call before deciding.
      expect(repl.output()).toContain('this exact call will run if you approve');
      expect(repl.output()).toMatch(/shell\.exec/);
      expect(repl.output()).toMatch(/uname/);
      type('details');
      await repl.waitFor('"inputHash"');
      type('y');
      await repl.waitFor('uname says: Linux');
      expect(count('uname says: Linux')).toBe(1);

      type('run uname once more');
      for (let i = 0; count('this exact call will run') < 2; i++) {
        if (i > 600) throw new Error(`no second prompt:\n${repl.output()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const before = repl.output().length;
      type('n');
      await repl.waitFor('denied: nothing ran');
      await new Promise((r) => setTimeout(r, 2000));
      expect(repl.output().slice(before)).not.toContain('uname says');
      expect(count('uname says: Linux')).toBe(1);
      type('/exit');
      const code = await new Promise<number | null>((r) => repl.child.once('exit', r));
      expect(code).toBe(0);
    } finally {
      repl.child.kill('SIGKILL');
    }

    // `chat -m` at a terminal asks too, and exits with the re-run's status; without a terminal it exits 3 (Escalated).
    const once = spawnAivyx(['chat', '--standalone', '-m', 'run uname -a'], env, { pty: true });
    try {
      await once.waitFor('approve? [y/N/details]', 120_000);
      once.child.stdin?.write('y\r');
      await once.waitFor('uname says: Linux');
      expect(await new Promise<number | null>((r) => once.child.once('exit', r))).toBe(0);
    } finally {
      once.child.kill('SIGKILL');
    }
    const piped = aivyx(['chat', '--standalone', '-m', 'run uname -a'], env, '');
    expect(piped.status, piped.stderr).toBe(3);
    expect(piped.stderr).toContain('[Escalated: shell.exec needs approval');
    // Later, at a terminal: `chat --resume <turn>` asks about that same call and shows its result.
    const waiting = /· turn (turn\/cli\/[0-9a-f-]{36})/.exec(piped.stderr)?.[1];
    expect(waiting, piped.stderr).toBeDefined();
    const resumed = spawnAivyx(['chat', '--standalone', '--resume', waiting!], env, { pty: true });
    try {
      await resumed.waitFor('approve? [y/N/details]', 120_000);
      resumed.child.stdin?.write('y\r');
      await resumed.waitFor('uname says: Linux');
      expect(await new Promise<number | null>((r) => resumed.child.once('exit', r))).toBe(0);
    } finally {
      resumed.child.kill('SIGKILL');
    }
  }, 420_000);
});

describe('aivyx audit verify on a tampered log', () => {
  it('exits non-zero and names the first bad sequence number', async () => {
    const { createTestDatabase } = await import('../support/postgres.js');
    const { openDatabase } = await import('../../infra/db/index.js');
    const { openKeyring } = await import('../../infra/keyring.js');
    const { appendAuditEntry } = await import('../../infra/audit/index.js');
    const { sql } = await import('kysely');
    const pg = await createTestDatabase('cli_tamper');
    const { db, close } = await openDatabase({ databaseUrl: pg.url });
    try {
      const master = await openKeyring(db, 'tamper passphrase', { kdfParams: { m: 256, t: 1, p: 1 } });
      for (let i = 1; i <= 5; i++)
        await appendAuditEntry(db, master.subkey('audit'), {
          idemKey: `k${i}`,
          event: { type: 'TurnEnded', turnId: `t${i}`, outcome: 'Completed', toolCallsMade: 0, durationMs: i },
        });
      const env = {
        ...(await baseEnv()),
        DATABASE_URL: pg.url,
        AIVYX_PASSPHRASE: 'tamper passphrase',
        AIVYX_HOME: mkdtempSync(join(tmpdir(), 'aivyx-tamper-')),
      };
      expect(aivyx(['audit', 'verify'], env).stdout).toMatch(/audit chain OK: 5 entries/);

      await sql`update audit_entries set event = replace(event, '"durationMs":3', '"durationMs":30') where seq = 3`.execute(db);
      const r = aivyx(['audit', 'verify'], env);
      expect(r.status).toBe(1);
      expect(r.stdout).toMatch(/BROKEN at seq 3/);
      const json = aivyx(['audit', 'verify', '--json'], env);
      expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, firstBadSeq: 3 });
    } finally {
      await close();
      await pg.drop();
    }
  }, 120_000);
});
