/**
 * Runs `temporal server start-dev` ourselves instead of through TestWorkflowEnvironment: the
 * SDK kills a server that is not up within 5 s, which a loaded 2-core machine misses. Also
 * applies the namespace setup (retention, search attributes) that a reused SQLite file
 * would otherwise lack, because start-dev ignores `--search-attribute` on an existing db.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes.js';
import { msToTs, optionalTsToMs } from '@temporalio/common/lib/time.js';
import { AivyxError } from '../../core/errors.js';
import { AIVYX_SEARCH_ATTRIBUTES } from '../../core/search-attributes.js';
import { assertPortsFree } from '../port-check.js';
import { freePort } from './free-port.js';
import { listensOn } from './listener-owner.js';

/** Closed workflows stay visible this long; the server default (24 h) loses yesterday's turns. */
export const MIN_RETENTION_HOURS = 720;

const HEALTH_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 5_000;

/** Options of `startDevServer`. */
export interface DevServerOptions {
  cliPath: string;
  /** Data directory: holds `temporal.sqlite` and the server log. */
  home: string;
  ip?: string;
  /** gRPC port; default: a free port. */
  port?: number;
  /** UI port; default: a free port (ignored when headless). */
  uiPort?: number;
  headless?: boolean;
  /** Remote codec endpoint the UI calls to decode payloads. */
  uiCodecEndpoint?: string;
  namespace?: string;
  /** Default: `<home>/temporal-server.log`. */
  logFile?: string;
  /** Keep everything in memory (no `temporal.sqlite`): the benchmark's floor, never a stack's server. */
  inMemory?: boolean;
}

/** A running dev server. */
export interface DevServer {
  /** `host:port` for `Connection.connect` / `NativeConnection.connect`. */
  address: string;
  uiUrl?: string;
  namespace: string;
  pid: number;
  /** The exact argv passed to the CLI (after the executable). */
  argv: readonly string[];
  logFile: string;
  /** Resolves when the process exits, for whatever reason (a supervisor restarts it). */
  exited: Promise<DevServerExit>;
  /** SIGTERM, then SIGKILL if still running after 5 s. */
  stop(): Promise<void>;
}

/** How a dev server process ended. */
export interface DevServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * SQLite pragmas for the dev server's file: WAL with `synchronous=normal` commits without an
 * fsync per transaction (a round trip ~3× faster here) and stays consistent after a crash of the
 * server process; an OS crash or power loss may lose the last moments of history (DESIGN.md).
 */
export const DEV_SERVER_SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'] as const;

/** Starts a dev server on `<home>/temporal.sqlite` (or in memory) and resolves once it serves a set-up namespace. */
export async function startDevServer(opts: DevServerOptions): Promise<DevServer> {
  mkdirSync(opts.home, { recursive: true });
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port ?? (await freePort());
  const namespace = opts.namespace ?? 'default';
  const uiPort = opts.headless ? undefined : (opts.uiPort ?? (await freePort()));
  const logFile = opts.logFile ?? join(opts.home, 'temporal-server.log');
  // A taken port would let another server answer our health check (another install's, on a restart too).
  await assertPortsFree(
    [
      { port, setting: 'AIVYX_TEMPORAL_PORT', what: 'the Temporal dev server' },
      ...(uiPort === undefined ? [] : [{ port: uiPort, setting: 'AIVYX_UI_PORT', what: 'the Temporal UI' }]),
    ],
    { host: ip },
  );
  const argv = [
    'server',
    'start-dev',
    ...(opts.inMemory ? [] : ['--db-filename', join(opts.home, 'temporal.sqlite')]),
    '--ip',
    ip,
    '--port',
    String(port),
    ...(uiPort === undefined ? ['--headless'] : ['--ui-port', String(uiPort)]),
    '--namespace',
    namespace,
    '--log-level',
    'warn',
    ...(opts.inMemory ? [] : DEV_SERVER_SQLITE_PRAGMAS.flatMap((p) => ['--sqlite-pragma', p])),
    // Only honoured on a fresh db file; ensureNamespaceSetup covers existing ones.
    ...AIVYX_SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${cliTypeName(k.type)}`]),
    ...(opts.uiCodecEndpoint ? ['--ui-codec-endpoint', opts.uiCodecEndpoint] : []),
  ];

  const logFd = openSync(logFile, 'a');
  // Its own process group: a terminal's Ctrl-C (meant to cancel a chat turn) must not reach the
  // server; the owning process stops it explicitly with stop().
  const child = spawn(opts.cliPath, argv, { stdio: ['ignore', logFd, logFd], detached: true });
  closeSync(logFd); // the child holds its own copy
  const watchdog = child.pid === undefined ? undefined : startWatchdog(process.pid, child.pid);
  let exited: DevServerExit | undefined;
  let spawnError: Error | undefined;
  const exit = new Promise<DevServerExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      watchdog?.kill('SIGKILL');
      resolve(exited);
    });
    child.once('error', (err) => {
      exited ??= { code: null, signal: null };
      spawnError = err;
      resolve(exited);
    });
  });

  const stop = async (): Promise<void> => {
    watchdog?.kill('SIGKILL');
    if (exited || child.pid === undefined) return;
    child.kill('SIGTERM');
    const killed = await Promise.race([exit.then(() => true), delay(STOP_GRACE_MS).then(() => false)]);
    if (!killed) {
      child.kill('SIGKILL');
      await exit;
    }
  };

  const address = `${ip}:${port}`;
  const died = (): AivyxError =>
    new AivyxError(
      'Config',
      `Temporal dev server exited early (${spawnError?.message ?? `code ${exited?.code}, signal ${exited?.signal}`})`,
      {
        hint: `see ${logFile}:\n${tailOf(logFile, 20)}`,
        detail: { logFile, argv },
      },
    );

  try {
    const connection = await waitHealthy(address, namespace, exit, () => exited !== undefined, died);
    try {
      assertOurs(child.pid, port, address);
      await ensureNamespaceSetup(connection, namespace);
    } finally {
      await connection.close();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    address,
    ...(uiPort === undefined ? {} : { uiUrl: `http://${ip}:${uiPort}` }),
    namespace,
    pid: child.pid ?? -1,
    argv,
    logFile,
    exited: exit,
    stop,
  };
}

/**
 * Makes a namespace fit for aivyx: retention ≥ 720 h and every custom search attribute
 * registered. Idempotent; also run by `aivyx up` against a cluster given by TEMPORAL_ADDRESS.
 */
export async function ensureNamespaceSetup(
  connection: Connection,
  namespace: string,
): Promise<{ retentionRaised: boolean; added: string[] }> {
  const described = await connection.workflowService.describeNamespace({ namespace });
  const retentionMs = optionalTsToMs(described.config?.workflowExecutionRetentionTtl) ?? 0;
  const retentionRaised = retentionMs < MIN_RETENTION_HOURS * 3_600_000;
  if (retentionRaised) {
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: msToTs(`${MIN_RETENTION_HOURS}h`) },
    });
  }

  const missing = await missingSearchAttributes(connection, namespace);
  if (Object.keys(missing).length > 0) {
    await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing }).catch(async (err: unknown) => {
      // Several processes of an install setting up a fresh namespace at once: another one added them first.
      if (Object.keys(await missingSearchAttributes(connection, namespace)).length > 0) throw err;
    });
  }
  return { retentionRaised, added: Object.keys(missing) };
}

/** The aivyx search attributes `namespace` lacks (by name → indexed type); throws Config on one of another type. */
async function missingSearchAttributes(connection: Connection, namespace: string): Promise<Record<string, number>> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const existing = customAttributes ?? {};
  const missing: Record<string, number> = {};
  for (const key of AIVYX_SEARCH_ATTRIBUTES) {
    const want = encodeSearchAttributeIndexedValueType(key.type);
    if (want === undefined) throw new AivyxError('Internal', `unknown search attribute type ${key.type}`);
    const have = existing[key.name];
    if (have === undefined) missing[key.name] = want;
    else if (have !== want) {
      throw new AivyxError('Config', `search attribute ${key.name} exists in namespace ${namespace} with another type`, {
        hint: `it must be ${key.type}; remove it with \`temporal operator search-attribute remove --name ${key.name}\` or use another namespace`,
      });
    }
  }
  return missing;
}

/** Refuses a server that answers at `address` but is not our process (it lost the race for the port). */
function assertOurs(pid: number | undefined, port: number, address: string): void {
  if (pid === undefined || listensOn(pid, port) !== false) return;
  throw new AivyxError(
    'Config',
    `another Temporal server answers at ${address}: the dev server started here (pid ${pid}) does not hold that port`,
    {
      hint: 'another program took the port as ours started: set AIVYX_TEMPORAL_PORT to a free port (0: any free port), or set TEMPORAL_ADDRESS to use that server on purpose (docs/DEPLOY.md)',
    },
  );
}

/** Polls until the frontend answers for `namespace`; fails fast if the process died. */
async function waitHealthy(
  address: string,
  namespace: string,
  exit: Promise<unknown>,
  hasExited: () => boolean,
  died: () => Error,
): Promise<Connection> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (hasExited()) throw died();
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ address, connectTimeout: 1_000 });
      // The default namespace is registered a moment after the port opens.
      await connection.workflowService.describeNamespace({ namespace });
      return connection;
    } catch (err) {
      lastError = err;
      await connection?.close().catch(() => undefined);
    }
    // Wake early when the process dies, so a crash reports in milliseconds, not at the deadline.
    await Promise.race([delay(250), exit]);
  }
  if (hasExited()) throw died();
  throw new AivyxError('Timeout', `Temporal dev server at ${address} not healthy after ${HEALTH_TIMEOUT_MS / 1000} s`, {
    hint: `last error: ${String(lastError)}`,
    cause: lastError,
  });
}

/** The CLI spells types `Keyword`, `KeywordList`, … where the SDK says `KEYWORD`, `KEYWORD_LIST`. */
function cliTypeName(t: SearchAttributeType): string {
  return t
    .toLowerCase()
    .split('_')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
}

function tailOf(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * A detached watchdog that stops the server once its owner is gone: the server has its own
 * process group (so a terminal Ctrl-C cannot reach it), which also means a SIGKILLed owner would
 * leave it running. The watchdog polls the owner's pid and then sends SIGTERM, and SIGKILL later.
 */
function startWatchdog(ownerPid: number, serverPid: number): ChildProcess {
  const script = `while kill -0 ${ownerPid} 2>/dev/null; do sleep 1; done; kill -TERM ${serverPid} 2>/dev/null; sleep ${STOP_GRACE_MS / 1000}; kill -KILL ${serverPid} 2>/dev/null; exit 0`;
  const dog = spawn('/bin/sh', ['-c', script], { stdio: 'ignore', detached: true });
  dog.unref();
  return dog;
}

/**
 * Stops a dev server left by a previous owner of `home` that died (its watchdog is stopping it,
 * but a new server cannot bind the same port or share the SQLite file until it is gone). Only a
 * process whose command line names this home's SQLite file is touched; returns when it is gone.
 */
export async function stopLeftoverDevServer(pid: number, home: string): Promise<void> {
  const ours = (): boolean => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(join(home, 'temporal.sqlite'));
    } catch {
      return false; // gone (or no /proc: nothing we can check, so nothing we touch)
    }
  };
  if (!ours()) return;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  for (let waited = 0; ours(); waited += 100) {
    if (waited === STOP_GRACE_MS) signal('SIGKILL');
    if (waited > STOP_GRACE_MS * 2)
      throw new AivyxError('Config', `the previous Temporal dev server (pid ${pid}) for ${home} does not stop`, {
        hint: `kill it (kill -9 ${pid}) and start again`,
      });
    await delay(100);
  }
}
