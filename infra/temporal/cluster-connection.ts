/**
 * How every client and worker of ours connects to a real cluster: TLS (with a client certificate for
 * mTLS, a private CA, a server name) and/or an API key, from the standard TEMPORAL_* variables. A dev
 * server of our own needs none of it. Files are read once, when the process connects; a missing or
 * half-given pair is a Config error naming the variable, before anything connects.
 */
import { readFileSync } from 'node:fs';
import { AivyxError } from '../../core/errors.js';

/** The connection options `Connection.connect` and `NativeConnection.connect` share. */
export interface ClusterConnectionOptions {
  address: string;
  tls?: { clientCertPair?: { crt: Buffer; key: Buffer }; serverRootCACertificate?: Buffer; serverNameOverride?: string };
  apiKey?: string;
}

function readPem(variable: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (cause) {
    throw new AivyxError('Config', `${variable}: cannot read ${path}: ${(cause as Error).message}`, {
      hint: 'give the path of a PEM file this process can read',
      cause,
    });
  }
}

/** The options for `address` under `env`'s TEMPORAL_TLS_* and TEMPORAL_API_KEY. */
export function clusterConnectionOptions(address: string, env: Record<string, string | undefined>): ClusterConnectionOptions {
  const cert = env.TEMPORAL_TLS_CLIENT_CERT_PATH;
  const key = env.TEMPORAL_TLS_CLIENT_KEY_PATH;
  if (Boolean(cert) !== Boolean(key))
    throw new AivyxError(
      'Config',
      `mTLS needs both TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (only ${cert ? 'the certificate' : 'the key'} is set)`,
      {
        hint: 'set both, or neither',
      },
    );
  const ca = env.TEMPORAL_TLS_SERVER_CA_CERT_PATH;
  const serverName = env.TEMPORAL_TLS_SERVER_NAME;
  const apiKey = env.TEMPORAL_API_KEY;
  const tls =
    cert && key
      ? { clientCertPair: { crt: readPem('TEMPORAL_TLS_CLIENT_CERT_PATH', cert), key: readPem('TEMPORAL_TLS_CLIENT_KEY_PATH', key) } }
      : undefined;
  // An API key travels only over TLS: with one, TLS is on even without a client certificate.
  const anyTls = tls || ca || serverName || apiKey;
  return {
    address,
    ...(anyTls
      ? {
          tls: {
            ...(tls ?? {}),
            ...(ca ? { serverRootCACertificate: readPem('TEMPORAL_TLS_SERVER_CA_CERT_PATH', ca) } : {}),
            ...(serverName ? { serverNameOverride: serverName } : {}),
          },
        }
      : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}
