/**
 * The stack's Temporal: our supervised dev server (restarted when it dies, given up on when it cannot
 * come back) or a cluster at TEMPORAL_ADDRESS; the codec server the Temporal UI decodes through; the
 * install's claim on its namespace; the client and the workers' native connection; the health probes.
 */
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { sql } from 'kysely';
import { AivyxError } from '../core/errors.js';
import { startCodecServer, type CodecServer } from '../infra/codec/index.js';
import { describeCause, watchDependency, type Health } from '../infra/health.js';
import { codecToken } from '../infra/home-tokens.js';
import type { Tracing } from '../infra/telemetry/index.js';
import {
  claimNamespace,
  clusterConnectionOptions,
  ensureNamespaceSetup,
  findTemporalCli,
  freePort,
  superviseDevServer,
  type SupervisedDevServer,
} from '../infra/temporal/index.js';
import type { StackStore } from './stack-store.js';
import type { StackStart } from './stack-types.js';

/** Each probe of a dependency gets this long to answer. */
const PROBE_TIMEOUT_MS = 2_000;

/** What starting Temporal needs beyond the request: the store's codecs and identity, and the stack's hooks. */
export interface TemporalNeeds {
  health: Health;
  store: Pick<StackStore, 'codec' | 'dataConverter' | 'installId'>;
  tracing: Tracing | undefined;
  /** The stack cannot go on (the dev server could not be brought back). */
  fail: (err: AivyxError) => void;
  /** The dev server came back with a new pid: what running.json says is republished. */
  devServerRestarted: () => void;
}

/** Temporal as the stack reaches it. */
export interface StackTemporal {
  address: string;
  uiUrl: string | undefined;
  codecServer: CodecServer | undefined;
  /** Our own dev server (none on a cluster). */
  devServer: SupervisedDevServer | undefined;
  connection: Connection;
  client: Client;
  nativeConnection: NativeConnection;
}

/** The server Temporal runs on, before any connection to it. */
interface TemporalServer {
  address: string;
  uiUrl: string | undefined;
  codecServer: CodecServer | undefined;
  devServer: SupervisedDevServer | undefined;
}

/** Starts (or joins) Temporal, claims the namespace and connects the client and the workers' connection. */
export async function startTemporal(start: StackStart, needs: TemporalNeeds): Promise<StackTemporal> {
  const { config } = start;
  // The codec server the Temporal UI decodes through; it answers CORS for the UI's origin only. With
  // our own dev server it also serves that UI under its origin, where decoding needs one sign-in.
  // AIVYX_UI_PORT=0 (any free port) is settled here: the codec server must know the UI's origin.
  const uiPort = config.uiPort || (await freePort());
  const startUiCodecServer = async (serveUi: boolean) => {
    const ui = `http://127.0.0.1:${uiPort}`;
    const server = await startCodecServer({
      codec: needs.store.codec,
      token: codecToken(config.home),
      allowedOrigin: ui,
      ...(serveUi ? { uiUpstream: ui } : { uiUrl: ui }),
      port: config.codecPort,
    });
    start.cleanups.push(() => server.stop());
    return server;
  };
  const server = config.temporalAddress
    ? await joinCluster(start, needs, config.temporalAddress, startUiCodecServer)
    : await startDevServer(start, needs, uiPort, startUiCodecServer);
  const { connection, client, nativeConnection } = await connectTemporal(start, needs, server.address);
  return { ...server, connection, client, nativeConnection };
}

/** A cluster at TEMPORAL_ADDRESS: nothing to start but, in a gateway, the codec server for the operators' UI. */
async function joinCluster(
  { role, opts }: StackStart,
  { health }: TemporalNeeds,
  address: string,
  startUiCodecServer: (serveUi: boolean) => Promise<CodecServer>,
): Promise<TemporalServer> {
  let codecServer: CodecServer | undefined;
  // On a cluster the gateway serves the operators' UI its codec endpoint.
  if (role === 'gateway' && !opts.headless) codecServer = await startUiCodecServer(false);
  health.register('temporal', {
    label: `Temporal at ${address}`,
    kind: 'Channel',
    hint: 'check that cluster (TEMPORAL_ADDRESS); aivyx reconnects by itself once it answers',
  });
  return { address, uiUrl: undefined, codecServer, devServer: undefined };
}

/** Our own dev server, supervised: restarted when it dies, the stack failed when it cannot come back. */
async function startDevServer(
  { config, opts, log, cleanups }: StackStart,
  { health, fail, devServerRestarted }: TemporalNeeds,
  uiPort: number,
  startUiCodecServer: (serveUi: boolean) => Promise<CodecServer>,
): Promise<TemporalServer> {
  let codecServer: CodecServer | undefined;
  const cliPath = findTemporalCli({ env: opts.env, projectRoot: opts.projectRoot });
  // Started first so the UI can be pointed at it.
  if (!opts.headless) codecServer = await startUiCodecServer(true);
  log('starting the Temporal dev server…');
  const devServerHint = `aivyx up restarts it by itself: retry in a few seconds (its log: ${join(config.home, 'temporal-server.log')})`;
  health.register('temporal', { label: 'the Temporal dev server', kind: 'Channel', hint: devServerHint });
  const devServer = await superviseDevServer(
    {
      cliPath,
      home: config.home,
      port: config.temporalPort,
      ...(opts.headless ? { headless: true } : { uiPort }),
      ...(codecServer ? { uiCodecEndpoint: codecServer.url } : {}),
    },
    {
      died: (server, exit) =>
        health.down(
          'temporal',
          `its process ${server.pid} exited (${exit.signal ?? `code ${exit.code}`}); restarting it on the same data and ports`,
        ),
      restartFailed: (err, retryInMs) =>
        log(`restarting the Temporal dev server failed (${describeCause(err)}); trying again in ${Math.round(retryInMs / 1000)} s`),
      restarted: (server, restarts) => {
        log(`Temporal dev server restarted (pid ${server.pid}, restart ${restarts})`);
        health.up('temporal');
        devServerRestarted();
      },
      gaveUp: (attempts, lastError) => {
        const why = `gave up restarting it after ${attempts} attempts${lastError ? ` (last: ${describeCause(lastError)})` : ' (it died again at once)'}`;
        health.down('temporal', why);
        fail(
          new AivyxError('Channel', `the Temporal dev server cannot be brought back: ${why}`, {
            hint: `its log: ${join(config.home, 'temporal-server.log')}; fix the cause and start aivyx up again`,
          }),
        );
      },
    },
  );
  cleanups.push(() => devServer.stop());
  const address = devServer.address;
  // The UI as the operator should open it: through the codec server, which decodes for it.
  const uiUrl = codecServer?.url ?? devServer.uiUrl;
  health.register('temporal', { label: `the Temporal dev server at ${address}`, kind: 'Channel', hint: devServerHint });
  return { address, uiUrl, codecServer, devServer };
}

/** Connects to Temporal, claims the install's namespace, and opens the client and the workers' connection. */
async function connectTemporal({ config, opts, cleanups }: StackStart, { store, tracing }: TemporalNeeds, address: string) {
  // A cluster's TLS and API key (TEMPORAL_TLS_*, TEMPORAL_API_KEY); our own dev server needs none.
  const connectOptions = config.temporalAddress ? clusterConnectionOptions(address, opts.env) : { address };
  const connection = await Connection.connect(connectOptions).catch((err: unknown) => {
    throw new AivyxError(
      'Channel',
      `cannot reach Temporal at ${address}${config.temporalAddress ? ' (TEMPORAL_ADDRESS)' : ''}: ${describeCause(err)}`,
      {
        hint: config.temporalAddress
          ? 'check that the cluster is up and the address is right, or unset TEMPORAL_ADDRESS to run a local dev server'
          : `see ${join(config.home, 'temporal-server.log')}`,
        detail: { dependency: 'temporal', unavailable: true },
        cause: err,
      },
    );
  });
  cleanups.push(() => connection.close());
  // One install per namespace: refused (before anything here touches it) when another install holds it.
  await claimNamespace(
    connection,
    { address, namespace: config.namespace, ...(config.temporalAddress ? {} : { devServerData: join(config.home, 'temporal.sqlite') }) },
    store.installId,
  );
  if (config.temporalAddress) await ensureNamespaceSetup(connection, config.namespace);
  const client = new Client({
    connection,
    namespace: config.namespace,
    dataConverter: store.dataConverter,
    ...(tracing && { interceptors: tracing.clientInterceptors }),
  });
  const nativeConnection = await NativeConnection.connect(connectOptions);
  cleanups.push(() => nativeConnection.close());
  return { connection, client, nativeConnection };
}

/** Probes: Temporal's gRPC health check, and PostgreSQL (PGlite lives in this process). */
export function watchDependencies({ cleanups }: StackStart, health: Health, connection: Connection, db: StackStore['db']): void {
  cleanups.push(
    watchDependency(
      health,
      'temporal',
      () => connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => connection.healthService.check({})),
      { timeoutMs: PROBE_TIMEOUT_MS },
    ),
  );
  if (db.kind === 'postgres')
    cleanups.push(
      watchDependency(health, 'database', () => sql`select 1`.execute(db.db), { intervalMs: 2_000, timeoutMs: PROBE_TIMEOUT_MS }),
    );
}
