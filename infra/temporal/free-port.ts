/** A free TCP port on 127.0.0.1, chosen by the OS. */
import { createServer } from 'node:net';

/** Resolves to a port that was free a moment ago (listen on :0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the free port'))));
    });
  });
}
