/**
 * `net.post` (POST/PUT/PATCH/DELETE) over the same SSRF-checked, capped exchange as `net.fetch`.
 * Keyed idempotency: every attempt of one call carries `Idempotency-Key: <sha256 of the
 * activity's idempotency key>`, stable across Temporal retries, so a server that honours the
 * header applies the effect once. Unverified: a 2xx says the server accepted, not that the effect
 * is what was meant.
 */
import { createHash } from 'node:crypto';
import { NET_DEFAULT_MAX_BYTES, NET_DEFAULT_TIMEOUT_MS, netPostTool } from '../../core/tools/net-tools.js';
import { httpExchange, type NetToolDeps } from './net-fetch.js';
import { implementTool, type ToolImplementation } from './tool-implementation.js';

/** The Idempotency-Key a call with this activity idempotency key sends (hex SHA-256, no run details leaked). */
export function idempotencyKeyFor(idemKey: string): string {
  return createHash('sha256').update(`aivyx net.post\0${idemKey}`).digest('hex');
}

/** Creates the `net.post` implementation. */
export function createNetPostTool(deps: NetToolDeps = {}): ToolImplementation {
  return implementTool(netPostTool, {
    resolveScope: async (input) => `net.post:${input.url}`,
    async run(req, ctx) {
      const headers: Record<string, string> = { ...req.headers, 'idempotency-key': idempotencyKeyFor(ctx.idemKey) };
      if (req.contentType !== undefined) headers['content-type'] = req.contentType;
      const output = await httpExchange(
        {
          tool: 'net.post',
          url: req.url,
          method: req.method,
          headers,
          ...(req.body === undefined ? {} : { body: req.body }),
          maxBytes: NET_DEFAULT_MAX_BYTES,
          timeoutMs: NET_DEFAULT_TIMEOUT_MS,
        },
        ctx,
        deps,
      );
      return { kind: 'completed', output, verified: 'Unverified' };
    },
  });
}
