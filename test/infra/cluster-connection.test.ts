/**
 * Connecting to a cluster that demands mTLS: a TLS front (Node's tls server, requesting and checking a
 * client certificate, speaking h2) before the real dev server. With TEMPORAL_TLS_* our client and our
 * worker's native connection get through; without a client certificate, or with a half-given pair or
 * an unreadable file, they do not, and the error names the variable.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterConnectionOptions } from '../../infra/temporal/index.js';
import { testTemporalAddress } from '../support/temporal.js';

const dir = mkdtempSync(join(tmpdir(), 'aivyx-mtls-'));
const file = (n: string) => join(dir, n);
const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });

let front: Server;
let address: string;
beforeAll(async () => {
  // A CA, a server certificate for localhost and a client certificate, both signed by the CA.
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=aivyx test CA',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  );
  for (const who of ['server', 'client']) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-subj',
      `/CN=${who === 'server' ? 'localhost' : 'aivyx-worker'}`,
      '-keyout',
      file(`${who}.key`),
      '-out',
      file(`${who}.csr`),
    );
    const ext = file(`${who}.ext`);
    execFileSync('sh', [
      '-c',
      `printf '%s' '${who === 'server' ? 'subjectAltName=DNS:localhost,IP:127.0.0.1' : 'extendedKeyUsage=clientAuth'}' > ${ext}`,
    ]);
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${who}.csr`),
      '-CA',
      file('ca.pem'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      ext,
      '-out',
      file(`${who}.pem`),
    );
  }
  const [host, port] = testTemporalAddress().split(':') as [string, string];
  front = createServer(
    {
      key: readFileSync(file('server.key')),
      cert: readFileSync(file('server.pem')),
      ca: readFileSync(file('ca.pem')),
      requestCert: true,
      rejectUnauthorized: true,
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      const upstream = connect(Number(port), host);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    },
  );
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  address = `127.0.0.1:${(front.address() as AddressInfo).port}`;
});
afterAll(() => {
  front?.close();
  rmSync(dir, { recursive: true, force: true });
});

const mtls = () => ({
  TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem'),
  TEMPORAL_TLS_CLIENT_KEY_PATH: file('client.key'),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem'),
  TEMPORAL_TLS_SERVER_NAME: 'localhost',
});

describe('a cluster behind mTLS', () => {
  it('is reached by the client and the worker connection with the TEMPORAL_TLS_* files', async () => {
    const options = clusterConnectionOptions(address, mtls());
    const connection = await Connection.connect(options);
    try {
      const ns = await connection.workflowService.describeNamespace({ namespace: 'default' });
      expect(ns.namespaceInfo?.name).toBe('default');
    } finally {
      await connection.close();
    }
    const native = await NativeConnection.connect(options);
    await native.close();
  });

  it('refuses a client without a certificate', async () => {
    const { TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME } = mtls();
    const options = clusterConnectionOptions(address, { TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME });
    await expect(
      Connection.connect({ ...options, connectTimeout: 3_000 }).then((c) => c.workflowService.describeNamespace({ namespace: 'default' })),
    ).rejects.toThrow();
  });

  it('says which variable is wrong before connecting', () => {
    expect(() => clusterConnectionOptions(address, { TEMPORAL_TLS_CLIENT_CERT_PATH: file('client.pem') })).toThrow(
      /needs both TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH \(only the certificate is set\)/,
    );
    expect(() => clusterConnectionOptions(address, { ...mtls(), TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('nope.pem') })).toThrow(
      /TEMPORAL_TLS_SERVER_CA_CERT_PATH: cannot read .*nope\.pem/,
    );
    // An API key turns TLS on and is sent as given; nothing set: a plain connection.
    expect(clusterConnectionOptions(address, { TEMPORAL_API_KEY: 'k' })).toEqual({ address, tls: {}, apiKey: 'k' });
    expect(clusterConnectionOptions(address, {})).toEqual({ address });
  });
});
