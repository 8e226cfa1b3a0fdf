/**
 * Temporal helpers for test files: connections to the shared dev server started by
 * test/support/temporal-global-setup.ts, unique task queues, and the time-skipping server.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection } from '@temporalio/worker';
import { inject } from 'vitest';
import { findTemporalTestServer } from '../../infra/temporal/index.js';

/** What a test needs to talk to the shared server: a client, and a connection for workers. */
export interface TestConnection {
  client: Client;
  /** For `Worker.create({ connection })`. */
  connection: NativeConnection;
  address: string;
  namespace: string;
}

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const NAMESPACE = 'default';
let shared: Promise<TestConnection> | undefined;

/** The shared dev server's address (from globalSetup); throws a how-to when it is missing. */
export function testTemporalAddress(): string {
  const address = inject('temporalAddress') ?? process.env.AIVYX_TEST_TEMPORAL_ADDRESS;
  if (!address) {
    throw new Error(
      "no Temporal test server: add globalSetup: ['test/support/temporal-global-setup.ts'] to vitest.config.ts, or set AIVYX_TEST_TEMPORAL_ADDRESS to a running server",
    );
  }
  return address;
}

/** Connections to the shared dev server, made once per test file and reused. */
export function testConnection(): Promise<TestConnection> {
  shared ??= (async () => {
    const address = testTemporalAddress();
    const [clientConnection, connection] = await Promise.all([Connection.connect({ address }), NativeConnection.connect({ address })]);
    return { client: new Client({ connection: clientConnection, namespace: NAMESPACE }), connection, address, namespace: NAMESPACE };
  })();
  return shared;
}

/** Closes what `testConnection` opened (call from `afterAll` if the file needs a clean exit). */
export async function closeTestConnection(): Promise<void> {
  const current = shared;
  shared = undefined;
  if (!current) return;
  const { client, connection } = await current;
  await Promise.all([client.connection.close(), connection.close()]);
}

/** A task queue no other test (or earlier run against the same server) uses. */
export function uniqueTaskQueue(name: string): string {
  return `${name}-${randomUUID()}`;
}

/** Registers `namespace` (as an operator would for a new install) and resolves once the server serves it. */
export async function registerNamespace(
  connection: Pick<Connection, 'workflowService'>,
  namespace: string,
  retention = '1h',
): Promise<void> {
  await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(retention) });
  // A new namespace takes a moment to be served.
  for (let i = 0; i < 100; i++) {
    const served = await connection.workflowService.describeNamespace({ namespace }).then(
      () => true,
      () => false,
    );
    if (served) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`namespace ${namespace} was registered but is not served`);
}

/** A fresh time-skipping environment on the venv's test server binary (never downloaded). */
export function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const path = findTemporalTestServer({ env: process.env, projectRoot });
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
}

/** The message of a refused Update (validator or handler; the client wraps it): fails the test if it was accepted. */
export async function updateRefusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    const err = e as { message?: string; cause?: { message?: string } };
    return `${err.message ?? ''}: ${err.cause?.message ?? ''}`;
  }
  throw new Error('the update was accepted');
}

/** The id of `workflowId`'s pending activity of `type`, once the server lists it (what an attacker at the frontend sees). */
export async function pendingActivity(client: Client, workflowId: string, type: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const desc = await client.workflow.getHandle(workflowId).describe();
    const pending = desc.raw.pendingActivities?.find((a) => a.activityType?.name === type);
    if (pending?.activityId) return pending.activityId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no pending ${type} on ${workflowId}`);
}
