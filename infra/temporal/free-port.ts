/**
 * A free TCP port on 127.0.0.1, for a setting of 0 ("any free port") and for tests. Chosen below
 * Linux's default ephemeral range (32768–60999): a port the OS hands out itself a moment later — to a
 * dev server's internal listeners, or as the local end of an outgoing connection — then never lands
 * on the one picked here before its owner binds it (a test's `aivyx up` once found its REST port taken).
 */
import { createServer } from 'node:net';

const LOW = 20_000;
const HIGH = 32_767;
/** Ports handed out by this process recently: two picks in a row never return the same one. */
const handedOut = new Set<number>();

/** True when a listener on `port` (127.0.0.1) can be opened right now (it is closed again at once). */
function canListen(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const addr = server.address();
      const bound = typeof addr === 'object' && addr ? addr.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** Resolves to a port that was free a moment ago, outside the ephemeral range when one is (the OS's choice otherwise). */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 64; i++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW));
    if (handedOut.has(port)) continue;
    if ((await canListen(port)) === port) return remember(port);
  }
  const port = await canListen(0);
  if (!port) throw new Error('could not find a free port on 127.0.0.1');
  return remember(port);
}

function remember(port: number): number {
  if (handedOut.size > 1000) handedOut.clear();
  handedOut.add(port);
  return port;
}
