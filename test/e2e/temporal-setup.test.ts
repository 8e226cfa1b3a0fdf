/**
 * `aivyx temporal setup` on a cluster that is not our dev server: a fresh namespace gets the
 * dashboard search attributes and the minimum retention; a second run finds everything present;
 * no address is a clear error. Against the shared dev server, as a stand-in for a real cluster.
 */
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { AIVYX_SEARCH_ATTRIBUTES } from '../../core/search-attributes.js';
import { aivyx } from '../support/cli-process.js';
import { registerNamespace, testConnection, testTemporalAddress } from '../support/temporal.js';

it('registers retention and search attributes on a fresh namespace, once', async () => {
  const { client } = await testConnection();
  const conn = client.connection;
  const namespace = `setup-${randomUUID().slice(0, 8)}`;
  await registerNamespace(conn, namespace);
  const env = { ...process.env, TEMPORAL_ADDRESS: testTemporalAddress() };
  const first = aivyx(['temporal', 'setup', '--namespace', namespace], env);
  expect(first.stderr).toBe('');
  expect(first.status).toBe(0);
  expect(first.stdout).toContain(`namespace ${namespace} on ${testTemporalAddress()}:`);
  expect(first.stdout).toMatch(/retention: raised to \d+ h/);
  for (const key of AIVYX_SEARCH_ATTRIBUTES) expect(first.stdout).toContain(key.name);
  const { customAttributes } = await conn.operatorService.listSearchAttributes({ namespace });
  expect(Object.keys(customAttributes ?? {})).toEqual(expect.arrayContaining(AIVYX_SEARCH_ATTRIBUTES.map((k) => k.name)));

  const second = aivyx(['temporal', 'setup', '--namespace', namespace], env);
  expect(second.stdout).toContain('search attributes: all present');
  expect(second.stdout).toContain('retention: already at least');

  const { TEMPORAL_ADDRESS: _unset, ...noAddress } = env;
  const refused = aivyx(['temporal', 'setup'], noAddress);
  expect(refused.status).not.toBe(0);
  expect(refused.stderr).toMatch(/no cluster to set up/);
  expect(refused.stderr).toMatch(/--address HOST:PORT or set TEMPORAL_ADDRESS/);
}, 180_000);
