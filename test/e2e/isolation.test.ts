/**
 * Two installs on one machine, through real `aivyx up` processes (issue 32): a second install refuses
 * to attach to the first one's Temporal — on the same ports (named by setting, before anything
 * starts), and by TEMPORAL_ADDRESS into the namespace the first install holds — and leaves the first
 * untouched; given a namespace of its own on the same server, both run turns and every task of each
 * namespace was taken by that install's own worker. An upgraded install keeps serving the work it
 * started on the earlier queue `aivyx`; a data directory whose database was replaced refuses the
 * earlier install's Temporal data; a dev server that cannot come back is given up on with one message
 * (no restart loop); and a taken REST port is refused before anything starts.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespaceOwner } from '../../infra/temporal/index.js';
import { aivyx, cliEnv, spawnAivyx, type AivyxProcess } from '../support/cli-process.js';
import { registerNamespace } from '../support/temporal.js';

const WORKFLOW_QUEUE = 1; // TASK_QUEUE_TYPE_WORKFLOW
const ACTIVITY_QUEUE = 2; // TASK_QUEUE_TYPE_ACTIVITY

function home(prefix: string): { dir: string; script: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ rules: [{ steps: [{ say: 'pong from {{message}}' }] }] }));
  return { dir, script };
}

const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});

function up(env: NodeJS.ProcessEnv): AivyxProcess {
  const p = spawnAivyx(['up'], env);
  children.push(p.child);
  return p;
}

/** A new data directory with `aivyx up` running on it (on free ports; `extra` added to its environment). */
async function upOnNewHome(prefix: string, extra: NodeJS.ProcessEnv = {}) {
  const h = home(prefix);
  const env = await cliEnv(h.dir, h.script, extra);
  const p = up(env);
  await p.waitFor('aivyx is up', 180_000);
  return { dir: h.dir, env, p };
}

/** What `aivyx up` printed about itself: `(namespace N, task queue Q, install I)`. */
function identityOf(p: AivyxProcess): { namespace: string; taskQueue: string; installId: string } {
  const m = /\(namespace (\S+), task queue (\S+), install ([0-9a-f]{16})\)/.exec(p.output());
  if (!m) throw new Error(`no identity line in:\n${p.output()}`);
  return { namespace: m[1]!, taskQueue: m[2]!, installId: m[3]! };
}

/** The identities polling `queue` in `namespace` (workflow and activity tasks). */
async function pollers(connection: Connection, namespace: string, queue: string): Promise<string[]> {
  const seen = new Set<string>();
  for (const taskQueueType of [WORKFLOW_QUEUE, ACTIVITY_QUEUE]) {
    const r = await connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name: queue }, taskQueueType });
    for (const p of r.pollers ?? []) if (p.identity) seen.add(p.identity);
  }
  return [...seen];
}

/** Every identity that started a workflow or activity task in any workflow of `namespace`, and the workflows' types. */
async function taskTakers(connection: Connection, namespace: string): Promise<{ identities: Set<string>; types: string[] }> {
  const client = new Client({ connection, namespace });
  const identities = new Set<string>();
  const types: string[] = [];
  for await (const wf of client.workflow.list()) {
    types.push(wf.type);
    const history = await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory();
    for (const e of history.events ?? []) {
      const identity = e.workflowTaskStartedEventAttributes?.identity ?? e.activityTaskStartedEventAttributes?.identity;
      if (identity) identities.add(identity);
    }
  }
  return { identities, types };
}

function chatOk(env: NodeJS.ProcessEnv, text: string): string {
  const r = aivyx(['chat', '-m', text], env);
  expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('two installs on one machine', () => {
  const a = home('aivyx-iso-a-');
  let envA: NodeJS.ProcessEnv;
  let upA: AivyxProcess;
  let address: string;
  let connection: Connection;

  beforeAll(async () => {
    envA = await cliEnv(a.dir, a.script, { AIVYX_PASSPHRASE: 'install A' });
    upA = up(envA);
    await upA.waitFor('aivyx is up', 180_000);
    address = `127.0.0.1:${envA.AIVYX_TEMPORAL_PORT}`;
    connection = await Connection.connect({ address });
  }, 200_000);

  afterAll(async () => {
    await connection?.close();
  });

  it('the second refuses to attach (on the same ports; into the namespace the first holds), and the first is untouched', async () => {
    const a1 = identityOf(upA);
    expect(a1.taskQueue).toBe(`aivyx-${a1.installId.slice(0, 8)}`);
    expect(await namespaceOwner(connection, 'default')).toBe(a1.installId);
    const pidA = upA.child.pid!;
    expect(await pollers(connection, 'default', a1.taskQueue)).toEqual([`${pidA}@${hostname()}`]);

    // The reported case: another AIVYX_HOME on the same (default) ports. Refused before anything starts, each port named.
    const b = home('aivyx-iso-b-');
    const samePorts = { ...(await cliEnv(b.dir, b.script, { AIVYX_PASSPHRASE: 'install B' })) };
    for (const k of ['AIVYX_TEMPORAL_PORT', 'AIVYX_UI_PORT', 'AIVYX_REST_PORT', 'AIVYX_CODEC_PORT']) samePorts[k] = envA[k];
    const started = Date.now();
    const onPorts = aivyx(['up'], samePorts);
    expect(onPorts.status).toBe(1);
    expect(onPorts.stdout).not.toContain('aivyx is up');
    expect(onPorts.stderr).toContain(
      `ports are taken on 127.0.0.1: ${envA.AIVYX_TEMPORAL_PORT} (the Temporal dev server, AIVYX_TEMPORAL_PORT)`,
    );
    for (const setting of ['AIVYX_UI_PORT', 'AIVYX_REST_PORT', 'AIVYX_CODEC_PORT']) expect(onPorts.stderr).toContain(setting);
    expect(onPorts.stderr).toContain('nothing was started');
    expect(onPorts.stderr).toContain('set TEMPORAL_ADDRESS and a TEMPORAL_NAMESPACE');
    // Nothing started: no database, no Temporal data, no running stack; and it took no dev server's start-up time.
    expect(existsSync(join(b.dir, 'pglite'))).toBe(false);
    expect(existsSync(join(b.dir, 'temporal.sqlite'))).toBe(false);
    expect(existsSync(join(b.dir, 'running.json'))).toBe(false);
    expect(Date.now() - started).toBeLessThan(30_000);

    // Pointed at the first install's server on purpose (TEMPORAL_ADDRESS), into the namespace the first holds: refused by identity.
    const envB: NodeJS.ProcessEnv = { ...(await cliEnv(b.dir, b.script, { AIVYX_PASSPHRASE: 'install B' })), TEMPORAL_ADDRESS: address };
    const intoA = aivyx(['up'], envB);
    expect(intoA.status).toBe(1);
    const refusal =
      /namespace "default" on (\S+) holds another aivyx install's work \(install ([0-9a-f]{16}); this one is ([0-9a-f]{16})\)/.exec(
        intoA.stderr,
      );
    expect(refusal, intoA.stderr).not.toBeNull();
    expect(refusal![1]).toBe(address);
    expect(refusal![2]).toBe(a1.installId);
    const idB = refusal![3]!;
    expect(idB).not.toBe(a1.installId);
    expect(intoA.stderr).toContain('TEMPORAL_NAMESPACE=NAME');
    expect(intoA.stderr).toContain('docs/DEPLOY.md');
    // Its REST channel never listened.
    await expect(fetch(`http://127.0.0.1:${envB.AIVYX_REST_PORT}/v1/health`)).rejects.toThrow();

    // The first is untouched: still its namespace, only its worker on its queue, none on B's, and it answers.
    expect(await namespaceOwner(connection, 'default')).toBe(a1.installId);
    expect(await pollers(connection, 'default', a1.taskQueue)).toEqual([`${pidA}@${hostname()}`]);
    expect(await pollers(connection, 'default', `aivyx-${idB.slice(0, 8)}`)).toEqual([]);
    expect(upA.child.exitCode).toBeNull();
    expect(chatOk(envA, 'ping-a0')).toContain('pong from ping-a0');
    expect(upA.output()).not.toMatch(/is DOWN/);
  }, 240_000);

  it("on one shared server with distinct identities both run turns, and neither ever receives the other's tasks", async () => {
    const a1 = identityOf(upA);
    // Install B in a namespace of its own on A's server (docs/DEPLOY.md, "Two installs on one cluster").
    const b = home('aivyx-iso-b2-');
    const namespaceB = `install-b-${Math.random().toString(36).slice(2, 8)}`;
    await registerNamespace(connection, namespaceB);
    const envB: NodeJS.ProcessEnv = {
      ...(await cliEnv(b.dir, b.script, { AIVYX_PASSPHRASE: 'install B' })),
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespaceB,
    };
    const upB = up(envB);
    await upB.waitFor('aivyx is up', 180_000);
    const b1 = identityOf(upB);
    expect(b1.namespace).toBe(namespaceB);
    expect(b1.installId).not.toBe(a1.installId);
    expect(b1.taskQueue).not.toBe(a1.taskQueue);
    expect(await namespaceOwner(connection, namespaceB)).toBe(b1.installId);
    expect(await namespaceOwner(connection, 'default')).toBe(a1.installId);

    // Both run turns, interleaved.
    for (const i of [1, 2]) {
      expect(chatOk(envA, `ping-a${i}`)).toContain(`pong from ping-a${i}`);
      expect(chatOk(envB, `ping-b${i}`)).toContain(`pong from ping-b${i}`);
    }

    const workerA = `${upA.child.pid}@${hostname()}`;
    const workerB = `${upB.child.pid}@${hostname()}`;
    // Each queue is polled by its own install's worker only, and neither install's queue exists in the other's namespace.
    expect(await pollers(connection, 'default', a1.taskQueue)).toEqual([workerA]);
    expect(await pollers(connection, namespaceB, b1.taskQueue)).toEqual([workerB]);
    expect(await pollers(connection, namespaceB, a1.taskQueue)).toEqual([]);
    expect(await pollers(connection, 'default', b1.taskQueue)).toEqual([]);
    // Every workflow and activity task of every workflow in each namespace was taken by that install's worker.
    const inA = await taskTakers(connection, 'default');
    const inB = await taskTakers(connection, namespaceB);
    expect(inA.types).toContain('turnWorkflow');
    expect(inB.types).toContain('turnWorkflow');
    expect([...inA.identities]).toEqual([workerA]);
    expect([...inB.identities]).toEqual([workerB]);
    // No refused task on either side.
    expect(upA.output()).not.toMatch(/refus|failed/i);
    expect(upB.output()).not.toMatch(/refus|failed/i);
  }, 300_000);
});

describe('an install from before its queue had its name', () => {
  it('keeps polling the earlier queue `aivyx` while its work is there: an open session goes on after the upgrade', async () => {
    const { env: before, p: old } = await upOnNewHome('aivyx-iso-legacy-', { AIVYX_TASK_QUEUE: 'aivyx' });
    expect(identityOf(old).taskQueue).toBe('aivyx');
    expect(chatOk(before, 'hello-before')).toContain('pong from hello-before');
    const session = 'legacy-session';
    expect(aivyx(['chat', '-m', 'in-session', '--session', session], before).stdout).toContain('pong from in-session');
    old.child.kill('SIGINT');
    await new Promise((r) => old.child.once('exit', r));

    // The upgrade: no AIVYX_TASK_QUEUE, so the install's own queue; its open session lives on `aivyx`.
    const { AIVYX_TASK_QUEUE: _dropped, ...after } = before;
    const now = up(after);
    await now.waitFor('aivyx is up', 180_000);
    const { taskQueue, installId } = identityOf(now);
    expect(taskQueue).toBe(`aivyx-${installId.slice(0, 8)}`);
    expect(aivyx(['chat', '-m', 'after-upgrade', '--session', session], after).stdout).toContain('pong from after-upgrade');
    expect(now.output()).toMatch(/also polling the earlier task queue aivyx: [1-9]\d* running workflow\(s\)/);

    // The legacy queue's workflows were taken by the upgraded process after the restart.
    const connection = await Connection.connect({ address: `127.0.0.1:${after.AIVYX_TEMPORAL_PORT}` });
    try {
      const client = new Client({ connection });
      const identities = new Set<string>();
      for await (const wf of client.workflow.list({ query: 'TaskQueue = "aivyx"' })) {
        for (const e of (await client.workflow.getHandle(wf.workflowId, wf.runId).fetchHistory()).events ?? [])
          if (e.workflowTaskStartedEventAttributes?.identity) identities.add(e.workflowTaskStartedEventAttributes.identity);
      }
      expect([...identities]).toContain(`${now.child.pid}@${hostname()}`);
    } finally {
      await connection.close();
    }
    now.child.kill('SIGINT');
    await new Promise((r) => now.child.once('exit', r));
  }, 420_000);
});

describe('a data directory whose database was replaced', () => {
  it("refuses its dev server's data, which belongs to the earlier install", async () => {
    const { dir, env, p: first } = await upOnNewHome('aivyx-iso-replaced-', { AIVYX_PASSPHRASE: 'the first install' });
    const { installId } = identityOf(first);
    first.child.kill('SIGINT');
    await new Promise((r) => first.child.once('exit', r));
    // The database goes (a new install is created in it); Temporal's file stays.
    rmSync(join(dir, 'pglite'), { recursive: true, force: true });
    const again = aivyx(['up'], { ...env, AIVYX_PASSPHRASE: 'a second install' });
    expect(again.status, again.stderr).toBe(1);
    expect(again.stderr).toContain(
      `the Temporal data in ${join(dir, 'temporal.sqlite')} belongs to another aivyx install (install ${installId}; this one is `,
    );
    expect(again.stderr).toContain(`move ${join(dir, 'temporal.sqlite')} away`);
    expect(again.stdout).not.toContain('aivyx is up');
  }, 300_000);
});

describe('a dev server that cannot come back', () => {
  it('is restarted a bounded number of times, then aivyx up says so once and exits', async () => {
    const { dir, p } = await upOnNewHome('aivyx-iso-giveup-');
    const { devServerPid } = JSON.parse(readFileSync(join(dir, 'running.json'), 'utf8')) as { devServerPid: number };
    // Its data file ruined under it, then the process killed: every restart fails at once on the same file.
    for (const f of ['temporal.sqlite-wal', 'temporal.sqlite-shm']) rmSync(join(dir, f), { force: true });
    writeFileSync(join(dir, 'temporal.sqlite'), 'not a database '.repeat(1_000));
    process.kill(devServerPid, 'SIGKILL');
    const code = await new Promise<number | null>((r) => p.child.once('exit', (c) => r(c)));
    const all = p.output();
    expect(code, all).toBe(1);
    // (A probe may have blipped while it started on a loaded machine: what counts is after the kill.)
    const out = all.slice(all.indexOf('aivyx is up'));
    const count = (text: string) => out.split(text).length - 1;
    expect(count('is DOWN'), out).toBe(1);
    expect(count('the Temporal dev server cannot be brought back: gave up restarting it after 6 attempts'), out).toBe(1);
    expect(count('restarting the Temporal dev server failed'), out).toBeLessThanOrEqual(5);
    expect(out).not.toContain('Temporal dev server restarted');
    expect(out).not.toContain('MaxListenersExceededWarning');
    expect(existsSync(join(dir, 'running.json'))).toBe(false);
  }, 300_000);
});

describe('a taken REST port', () => {
  let squatter: Server;
  beforeAll(async () => {
    squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => squatter.close(() => r())));

  it('is refused before anything starts, naming AIVYX_REST_PORT', async () => {
    const h = home('aivyx-iso-rest-');
    const port = (squatter.address() as { port: number }).port;
    const env = await cliEnv(h.dir, h.script, { AIVYX_REST_PORT: String(port) });
    const r = aivyx(['up'], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`port is taken on 127.0.0.1: ${port} (the REST channel, AIVYX_REST_PORT): nothing was started`);
    expect(r.stderr).toContain('set AIVYX_REST_PORT to a free port (0: any free port)');
    expect(r.stderr).not.toContain('EADDRINUSE');
    // Nothing started: no database, no Temporal data file, no lock left behind; the other ports are free again.
    expect(existsSync(join(h.dir, 'pglite'))).toBe(false);
    expect(existsSync(join(h.dir, 'temporal.sqlite'))).toBe(false);
    expect(existsSync(join(h.dir, 'running.json'))).toBe(false);
    const temporalPort = Number(env.AIVYX_TEMPORAL_PORT);
    const probe = createServer();
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(temporalPort, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => probe.close(() => resolve()));
  }, 60_000);
});
