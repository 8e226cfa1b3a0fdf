/** `freePort` picks ports the OS will not hand out to something else a moment later, and never the same one twice in a row. */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../infra/temporal/free-port.js';

describe('freePort', () => {
  it('picks distinct ports below the ephemeral range that can be listened on', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 20; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const p of ports) expect(p).toBeGreaterThanOrEqual(20_000);
    for (const p of ports) expect(p).toBeLessThan(32_768);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(ports[0], '127.0.0.1', resolve));
    server.close();
  });
});
