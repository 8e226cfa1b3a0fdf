/** The ports a stack will bind are checked before it starts: a taken one is refused by its setting. */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertPortsFree, portTakenError } from '../../infra/port-check.js';
import { freePort } from '../../infra/temporal/index.js';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject).listen(port, '127.0.0.1', () => resolve(s));
  });

describe('assertPortsFree', () => {
  let held: Server;
  let port: number;
  beforeAll(async () => {
    held = await listen(0);
    port = (held.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => held.close(() => r())));

  it('refuses every taken port at once, each with its setting; passes free ones and 0', async () => {
    const other = await listen(0);
    const otherPort = (other.address() as { port: number }).port;
    try {
      const free = await freePort();
      await expect(
        assertPortsFree(
          [
            { port, setting: 'AIVYX_REST_PORT', what: 'the REST channel' },
            { port: free, setting: 'AIVYX_UI_PORT', what: 'the Temporal UI' },
            { port: 0, setting: 'AIVYX_CODEC_PORT', what: "the UI's codec server" },
            { port: otherPort, setting: 'AIVYX_TEMPORAL_PORT', what: 'the Temporal dev server' },
          ],
          { then: 'nothing was started' },
        ),
      ).rejects.toMatchObject({
        kind: 'Config',
        message: `ports are taken on 127.0.0.1: ${port} (the REST channel, AIVYX_REST_PORT), ${otherPort} (the Temporal dev server, AIVYX_TEMPORAL_PORT): nothing was started`,
        hint: expect.stringContaining('set AIVYX_REST_PORT, AIVYX_TEMPORAL_PORT to a free port (0: any free port)'),
      });
      await expect(assertPortsFree([{ port: free, setting: 'AIVYX_UI_PORT', what: 'the Temporal UI' }])).resolves.toBeUndefined();
      // The check let go of the free port: it can be bound at once.
      const rebound = await listen(free);
      await new Promise<void>((r) => rebound.close(() => r()));
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
    }
  });

  it("turns a listen's EADDRINUSE (a port taken after the check) into the same refusal; other errors are not its business", async () => {
    const err = await listen(port).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(portTakenError(err, { port, setting: 'AIVYX_REST_PORT', what: 'the REST channel' })).toMatchObject({
      kind: 'Config',
      message: `port is taken on 127.0.0.1: ${port} (the REST channel, AIVYX_REST_PORT)`,
    });
    expect(portTakenError(new Error('boom'), { port, setting: 'AIVYX_REST_PORT', what: 'the REST channel' })).toBeUndefined();
  });
});
