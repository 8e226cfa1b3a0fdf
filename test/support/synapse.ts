/**
 * A real Matrix homeserver for the Matrix channel tests: Synapse (`matrix-synapse` from PyPI, in the
 * venv `.ci/run` installs) as a child process with its own config in a temp dir — SQLite, one
 * client listener on 127.0.0.1, no federation, rate limits off — and users registered through the
 * admin API with the registration shared secret, as an operator would.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from './mail-servers.js';

/** The venv's Python with Synapse (`.ci/run` creates it; AIVYX_TEST_SYNAPSE_PYTHON overrides it). */
export const SYNAPSE_PYTHON = process.env.AIVYX_TEST_SYNAPSE_PYTHON ?? resolve('.venv-synapse/bin/python');

/** True when Synapse is installed (tests are skipped with a how-to otherwise, except under CI). */
export function synapseAvailable(): boolean {
  return existsSync(SYNAPSE_PYTHON);
}

/** A registered user: their MXID and an access token. */
export interface SynapseUser {
  userId: string;
  accessToken: string;
}

/** A running Synapse. */
export interface Synapse {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  serverName: string;
  /** Registers `localpart` with the shared secret and returns its MXID and token. */
  register(localpart: string): Promise<SynapseUser>;
  /** Logs `localpart` in again: a new access token for a new device of the same account. */
  newDevice(localpart: string): Promise<SynapseUser>;
  stop(): Promise<void>;
}

/** No limits worth hitting in a test (every `rc_*` block Synapse reads). */
const UNLIMITED = { per_second: 10_000, burst_count: 10_000 };

function configYaml(dir: string, port: number, secret: string): string {
  // JSON is YAML: no YAML library needed.
  return JSON.stringify({
    server_name: 'localhost',
    pid_file: join(dir, 'homeserver.pid'),
    listeners: [{ port, bind_addresses: ['127.0.0.1'], type: 'http', tls: false, resources: [{ names: ['client'], compress: false }] }],
    database: { name: 'sqlite3', args: { database: join(dir, 'homeserver.db') } },
    media_store_path: join(dir, 'media'),
    signing_key_path: join(dir, 'signing.key'),
    registration_shared_secret: secret,
    macaroon_secret_key: randomBytes(24).toString('hex'),
    form_secret: randomBytes(24).toString('hex'),
    report_stats: false,
    enable_registration: false,
    trusted_key_servers: [],
    suppress_key_server_warning: true,
    federation_domain_whitelist: [],
    presence: { enabled: false },
    rc_message: UNLIMITED,
    rc_registration: UNLIMITED,
    rc_login: { address: UNLIMITED, account: UNLIMITED, failed_attempts: UNLIMITED },
    rc_joins: { local: UNLIMITED, remote: UNLIMITED },
    rc_joins_per_room: UNLIMITED,
    rc_invites: { per_room: UNLIMITED, per_user: UNLIMITED, per_issuer: UNLIMITED },
    rc_admin_redaction: UNLIMITED,
    rc_3pid_validation: UNLIMITED,
  });
}

async function waitUntilServing(url: string, child: ChildProcess, stderr: () => string): Promise<void> {
  const until = Date.now() + 90_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`Synapse exited (${child.exitCode}): ${stderr().slice(-2000)}`);
    try {
      if ((await fetch(`${url}/_matrix/client/versions`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`Synapse did not start: ${stderr().slice(-2000)}`);
}

/** Starts Synapse on a free loopback port with a fresh SQLite database. */
export async function startSynapse(): Promise<Synapse> {
  if (!synapseAvailable())
    throw new Error(
      `Synapse is not installed at ${SYNAPSE_PYTHON}: .ci/run installs it (python3 -m venv .venv-synapse && .venv-synapse/bin/pip install matrix-synapse==1.163.2)`,
    );
  const dir = mkdtempSync(join(tmpdir(), 'aivyx-synapse-'));
  const port = await freePort();
  const secret = randomBytes(24).toString('hex');
  const config = join(dir, 'homeserver.yaml');
  writeFileSync(config, configYaml(dir, port, secret));
  execFileSync(SYNAPSE_PYTHON, ['-m', 'synapse.app.homeserver', '-c', config, '--generate-keys'], { stdio: 'ignore' });
  const child = spawn(SYNAPSE_PYTHON, ['-m', 'synapse.app.homeserver', '-c', config], { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-8000)));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilServing(url, child, () => err);
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  // Each user's password, for logging in from another device.
  const passwords = new Map<string, string>();
  return {
    url,
    serverName: 'localhost',
    async newDevice(localpart) {
      const res = await fetch(`${url}/_matrix/client/v3/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'm.login.password',
          identifier: { type: 'm.id.user', user: localpart },
          password: passwords.get(localpart),
        }),
      });
      if (!res.ok) throw new Error(`logging ${localpart} in: HTTP ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { user_id: string; access_token: string };
      return { userId: body.user_id, accessToken: body.access_token };
    },
    async register(localpart) {
      const endpoint = `${url}/_synapse/admin/v1/register`;
      const { nonce } = (await (await fetch(endpoint)).json()) as { nonce: string };
      const password = randomBytes(12).toString('hex');
      passwords.set(localpart, password);
      const mac = createHmac('sha1', secret).update(`${nonce}\0${localpart}\0${password}\0notadmin`).digest('hex');
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ nonce, username: localpart, password, admin: false, mac }),
      });
      if (!res.ok) throw new Error(`registering ${localpart}: HTTP ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { user_id: string; access_token: string };
      return { userId: body.user_id, accessToken: body.access_token };
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
