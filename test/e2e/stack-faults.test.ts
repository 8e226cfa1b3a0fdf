/**
 * Faults an operator meets, through real processes: the dev server SIGKILLed under a running
 * `aivyx up` (noticed on stderr within seconds, /v1/health 503, restarted on the same data — a new
 * turn completes and a mission waiting at its gate still completes after approval); `aivyx up`
 * itself SIGKILLed while turns run (the CLI printed each turn id when it was accepted, says how to
 * follow it, `chat --follow` shows the outcome once `up` is back, and the REPL re-attaches by
 * itself); PostgreSQL cut off behind a proxy (named on stderr, 503s, announced back); and
 * `chat`/`mission` refusing to start a second stack silently.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { aivyx, aivyxAsync, cliEnv, spawnAivyx, untilAivyx, type AivyxProcess } from '../support/cli-process.js';
import { freePort } from '../../infra/temporal/index.js';
import { createTestDatabase } from '../support/postgres.js';
import { isAlive } from '../support/processes.js';

const script = {
  rules: [
    { match: 'slow', steps: [{ say: 'the slow answer, at last', delayMs: 6_000 }] },
    {
      match: 'run',
      steps: [
        { call: [{ tool: 'shell.exec', input: { argv: ['uname', '-a'] } }] },
        { say: 'ran: {{result.0.output.exitCode}}', sayOnFailure: 'not run: {{results}}' },
      ],
    },
    { steps: [{ say: 'pong' }] },
  ],
};

function home(prefix: string): { dir: string; script: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(script));
  return { dir, script: file };
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

function spawn(args: string[], env: NodeJS.ProcessEnv): AivyxProcess {
  const p = spawnAivyx(args, env);
  children.push(p.child);
  return p;
}

function exited(p: AivyxProcess): Promise<number | null> {
  if (p.child.exitCode !== null) return Promise.resolve(p.child.exitCode);
  return new Promise((r) => p.child.once('exit', (code) => r(code)));
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const running = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'running.json'), 'utf8')) as { pid: number; restUrl: string; devServerPid: number };

describe('the dev server dies under aivyx up', () => {
  it('is noticed within seconds, health goes 503, it is restarted, and turns and a waiting mission carry on', async () => {
    const h = home('aivyx-devkill-');
    const env = await cliEnv(h.dir, h.script, { AIVYX_CONFIRM_FIRST: 'shell.exec' });
    const up = spawn(['up'], env);
    await up.waitFor('aivyx is up', 120_000);
    const { restUrl, devServerPid } = running(h.dir);
    const health = async () => (await fetch(`${restUrl}/v1/health`)).status;
    expect(await health()).toBe(200);

    // A mission waiting at its gate (shell.exec is confirm-first), as in the demo's `run uname -a`.
    const created = aivyx(['mission', 'create', '--goal', 'look at the machine', '--step', 'run uname -a'], env);
    expect(created.status, created.stderr).toBe(0);
    const missionId = created.stdout.trim();
    await untilAivyx(['mission', 'list', '--state', 'waiting'], env, (s) => s.includes(missionId), 60_000);
    // A reminder whose timer is running when the server dies (issue 12): it fires after the restart, once.
    const reminderFile = join(h.dir, 'reminder.json');
    writeFileSync(reminderFile, JSON.stringify({ goal: 'passport', steps: [{ wait: '25s' }, { notify: 'renew the passport' }] }));
    const reminder = aivyx(['mission', 'create', reminderFile], env);
    expect(reminder.status, reminder.stderr).toBe(0);
    const reminderId = reminder.stdout.trim();
    await untilAivyx(['mission', 'show', reminderId], env, (s) => s.includes('waiting: a timer until'), 60_000);

    process.kill(devServerPid, 'SIGKILL');
    // Noticed within seconds, on stderr.
    await up.waitFor('is DOWN', 10_000);
    expect(up.output()).toMatch(
      new RegExp(
        `the Temporal dev server at 127\\.0\\.0\\.1:\\d+ is DOWN: its process ${devServerPid} exited \\(SIGKILL\\); restarting it`,
      ),
    );
    // Health says so while it is down (the restart takes seconds: it is seen here first).
    expect(await until('health to go non-200', async () => ((await health()) === 503 ? true : undefined), 10_000)).toBe(true);

    await up.waitFor('Temporal dev server restarted', 90_000);
    await until('health to be 200 again', async () => ((await health()) === 200 ? true : undefined), 30_000);
    const restarted = running(h.dir);
    expect(restarted.devServerPid).not.toBe(devServerPid);
    expect(isAlive(restarted.devServerPid)).toBe(true);
    expect(isAlive(devServerPid)).toBe(false);

    // A turn started afterwards completes.
    const chat = aivyx(['chat', '-m', 'ping'], env);
    expect(chat.stdout).toContain('pong');
    expect(chat.status, chat.stderr).toBe(0);

    // The mission that waited through the outage still completes after approval.
    const approved = aivyx(['mission', 'approve', `${missionId}/gate-1`], env);
    expect(approved.stdout, approved.stderr).toContain('approved');
    await untilAivyx(['mission', 'show', missionId], env, (s) => s.includes(': completed\n'), 90_000);
    // The reminder's timer survived the restart: its notice is in the owner's inbox, once.
    await untilAivyx(['mission', 'show', reminderId], env, (s) => s.includes(': completed\n'), 90_000);
    const inbox = aivyx(['inbox'], env).stdout;
    expect(inbox.split('renew the passport').length - 1, inbox).toBe(1);
    expect(aivyx(['audit', 'verify'], env).stdout).toMatch(/audit chain OK/);

    up.child.kill('SIGINT');
    expect(await exited(up)).toBe(0);
  }, 420_000);
});

/** A TCP proxy in front of PostgreSQL that a test can cut and restore (the real server keeps running for everyone else). */
async function cuttableProxy(target: {
  host: string;
  port: number;
}): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  const port = await freePort();
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  const cut = async () => {
    const s = server;
    server = undefined;
    for (const sock of sockets) sock.destroy();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  };
  await listen();
  return { port, cut, restore: listen, close: cut };
}

describe('the database goes away under aivyx up', () => {
  it('is noticed and named on stderr, health and database routes answer 503, and it is announced back', async () => {
    const h = home('aivyx-dbcut-');
    const pg = await createTestDatabase('dbcut');
    const proxy = await cuttableProxy({ host: '127.0.0.1', port: Number(new URL(pg.url).port || 5432) });
    try {
      const url = new URL(pg.url);
      url.port = String(proxy.port);
      // (cliEnv clears DATABASE_URL: the embedded default is what the other tests want.)
      const env = { ...(await cliEnv(h.dir, h.script)), DATABASE_URL: url.toString() };
      const up = spawn(['up'], env);
      await up.waitFor('aivyx is up', 120_000);
      const { restUrl } = running(h.dir);
      const token = readFileSync(join(h.dir, 'rest-token'), 'utf8').trim();

      await proxy.cut();
      await up.waitFor('is DOWN', 15_000);
      expect(up.output()).toMatch(
        new RegExp(
          `the database \\(PostgreSQL at 127\\.0\\.0\\.1:${proxy.port}${url.pathname}\\) is DOWN: .*start PostgreSQL or fix DATABASE_URL`,
        ),
      );
      expect((await fetch(`${restUrl}/v1/health`)).status).toBe(503);
      // Not aivyx(): a blocking child would stop this process's proxy from relaying its queries.
      const verify = await aivyxAsync(['audit', 'verify'], env);
      expect(verify.status).toBe(1);
      expect(verify.stderr).toMatch(/the database \(PostgreSQL at .*\) is unavailable/);
      const chat = await aivyxAsync(['chat', '-m', 'ping'], env);
      expect(chat.status).toBe(1);
      expect(chat.stderr).toMatch(/the database .* is unavailable.*start PostgreSQL or fix DATABASE_URL/);

      await proxy.restore();
      await up.waitFor('is back', 30_000);
      expect((await fetch(`${restUrl}/v1/health`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      const after = await aivyxAsync(['chat', '-m', 'ping'], env);
      expect(after.stdout).toContain('pong');
      expect(after.status, after.stderr).toBe(0);
      up.child.kill('SIGINT');
      expect(await exited(up)).toBe(0);
    } finally {
      await proxy.close();
      await pg.drop();
    }
  }, 300_000);
});

describe('aivyx up dies while turns run', () => {
  it('the CLI printed the turn id, says how to follow it; chat --follow shows the outcome after up restarts; the REPL re-attaches', async () => {
    const h = home('aivyx-upkill-');
    const env = await cliEnv(h.dir, h.script);
    const up = spawn(['up'], env);
    await up.waitFor('aivyx is up', 120_000);

    const repl = spawn(['chat'], env);
    await repl.waitFor('type a message', 60_000);
    repl.child.stdin?.write('slow in the repl\n');
    const one = spawn(['chat', '-m', 'slow one'], env);
    // Printed as soon as the turn is accepted: the id survives whatever happens next.
    const turnId = await until('the turn id', () => /· turn (turn\/cli\/[0-9a-f-]{36})/.exec(one.output())?.[1], 60_000);
    const replTurn = await until('the REPL turn id', () => /· turn (turn\/cli\/[0-9a-f-]{36})/.exec(repl.output())?.[1], 60_000);
    await new Promise((r) => setTimeout(r, 1_000)); // both slow steps are running now

    process.kill(up.child.pid!, 'SIGKILL');
    expect(await exited(one)).toBe(6);
    expect(one.output()).toContain(`lost aivyx up while turn ${turnId} was running`);
    expect(one.output()).toContain(`aivyx chat --follow ${turnId}`);
    expect(one.output()).not.toContain('the slow answer');
    await repl.waitFor(`turn ${replTurn} goes on — waiting to re-attach`, 30_000);

    // Without aivyx up, following refuses to start a stack of its own (and says why).
    const refused = aivyx(['chat', '--follow', turnId], env);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/is gone: it stopped without cleaning up/);

    const again = spawn(['up'], env);
    await again.waitFor('aivyx is up', 120_000);
    const followed = aivyx(['chat', '--follow', turnId], env);
    expect(followed.stderr).toContain(`· turn ${turnId}`);
    expect(followed.stdout).toContain('the slow answer, at last');
    expect(followed.stderr).toMatch(/\[Completed/);
    expect(followed.status).toBe(0);

    // The REPL found aivyx up again and shows how its turn ended, then goes on.
    await repl.waitFor('the slow answer, at last', 90_000);
    await repl.waitFor('[Completed', 10_000);
    repl.child.stdin?.write('ping\n');
    await repl.waitFor('pong', 60_000);
    repl.child.stdin?.write('/exit\n');
    expect(await exited(repl)).toBe(0);

    // Each turn ran to one end, once: one TurnEnded per turn in the audit log.
    const tail = aivyx(['audit', 'tail', '-n', '100', '--json'], env);
    const ended = tail.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { event: { type: string; turnId?: string } }).event)
      .filter((e) => e.type === 'TurnEnded');
    expect(ended.filter((e) => e.turnId === turnId)).toHaveLength(1);
    expect(ended.filter((e) => e.turnId === replTurn)).toHaveLength(1);
    again.child.kill('SIGINT');
    expect(await exited(again)).toBe(0);
  }, 420_000);
});

describe('no second stack behind your back', () => {
  it('chat and mission refuse without aivyx up and offer --standalone; a stale lock is named; --standalone works', async () => {
    const h = home('aivyx-standalone-');
    const env = await cliEnv(h.dir, h.script);
    const chat = aivyx(['chat', '-m', 'ping'], env);
    expect(chat.status).toBe(1);
    expect(chat.stderr).toContain(`no aivyx up is running on ${h.dir}`);
    expect(chat.stderr).toContain('--standalone');
    // Nothing was started: no database, no dev server, no lock left behind.
    expect(existsSync(join(h.dir, 'pglite'))).toBe(false);
    expect(existsSync(join(h.dir, 'temporal.sqlite'))).toBe(false);
    expect(existsSync(join(h.dir, 'aivyx.pid'))).toBe(false);
    const mission = aivyx(['mission', 'list'], env);
    expect(mission.status).toBe(1);
    expect(mission.stderr).toContain('--standalone');

    // What a SIGKILLed aivyx up leaves behind.
    const dead = 2 ** 22 + 12_345;
    writeFileSync(join(h.dir, 'aivyx.pid'), JSON.stringify({ pid: dead, role: 'up' }));
    writeFileSync(
      join(h.dir, 'running.json'),
      JSON.stringify({ pid: dead, role: 'up', restUrl: 'http://127.0.0.1:9', temporalAddress: '127.0.0.1:9' }),
    );
    const stale = aivyx(['chat', '-m', 'ping'], env);
    expect(stale.status).toBe(1);
    expect(stale.stderr).toContain(`the aivyx up that ran on ${h.dir} (pid ${dead}) is gone`);
    expect(stale.stderr).toContain('--standalone');

    const alone = aivyx(['chat', '--standalone', '-m', 'ping'], env);
    expect(alone.stdout).toContain('pong');
    expect(alone.status, alone.stderr).toBe(0);
    // The standalone stack released the data directory when it was done.
    expect(existsSync(join(h.dir, 'aivyx.pid'))).toBe(false);
    expect(aivyx(['mission', 'list', '--standalone'], env).status).toBe(0);
  }, 300_000);
});
