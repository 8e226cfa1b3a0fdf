/**
 * Every port a process is about to bind, checked before anything starts: a taken port is refused with
 * the setting that moves it, instead of a raw `listen EADDRINUSE` halfway through a start (or, worse, a
 * health check answered by another install's server on that port).
 */
import { createServer } from 'node:net';
import { AivyxError } from '../core/errors.js';

/** A port a process will listen on, and the setting that chooses it. */
export interface WantedPort {
  port: number;
  /** The environment variable that moves it, e.g. `AIVYX_REST_PORT`. */
  setting: string;
  /** What listens there, for the message ("the REST channel"). */
  what: string;
}

/** Resolves to the error code when `port` cannot be bound on `host` right now (EADDRINUSE, EACCES), else undefined. */
export function bindError(port: number, host = '127.0.0.1'): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'unknown error'));
    server.listen({ port, host }, () => server.close(() => resolve(undefined)));
  });
}

function refusal(taken: Array<WantedPort & { code: string }>, host: string, then: string | undefined): AivyxError {
  const list = taken.map((t) => `${t.port} (${t.what}, ${t.setting})${t.code === 'EADDRINUSE' ? '' : `: ${t.code}`}`);
  const are = taken.length > 1 ? 's are' : ' is';
  return new AivyxError('Config', `port${are} taken on ${host}: ${list.join(', ')}${then ? `: ${then}` : ''}`, {
    hint: `another program listens there (another aivyx up, with another AIVYX_HOME?): set ${taken.map((t) => t.setting).join(', ')} to a free port (0: any free port); to share another install's Temporal instead, set TEMPORAL_ADDRESS and a TEMPORAL_NAMESPACE of this install's own (docs/DEPLOY.md)`,
    detail: { taken: taken.map((t) => ({ port: t.port, setting: t.setting })) },
  });
}

/** The refusal naming `wanted.setting` when `err` is a listen's EADDRINUSE (taken after the check), else undefined. */
export function portTakenError(err: unknown, wanted: WantedPort, host = '127.0.0.1'): AivyxError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'EADDRINUSE' ? refusal([{ ...wanted, code }], host, undefined) : undefined;
}

/**
 * Refuses, naming each setting, when any wanted port (0 = any free port, not checked) cannot be bound
 * on `host` (default 127.0.0.1); resolves when all can. `then` ends the message (what did not happen).
 */
export async function assertPortsFree(wanted: readonly WantedPort[], opts: { host?: string; then?: string } = {}): Promise<void> {
  const host = opts.host ?? '127.0.0.1';
  const checked = wanted.filter((w) => w.port !== 0);
  const errors = await Promise.all(checked.map((w) => bindError(w.port, host)));
  const taken = checked.flatMap((w, i) => (errors[i] ? [{ ...w, code: errors[i] }] : []));
  if (taken.length > 0) throw refusal(taken, host, opts.then);
}
