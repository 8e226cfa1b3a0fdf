/**
 * compose.yaml, checked without a Docker engine (CI has none): it is a valid Compose file by the
 * official Compose Specification schema; every aivyx service runs a command the built CLI really
 * has; the passphrase is a secret (gitignored, dockerignored), never an environment value; every
 * published port is bound to 127.0.0.1; the gateway, the UI and the codec endpoint agree on their
 * ports; the image is built by the Dockerfile with package.json's own build script.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENV_TABLE } from '../../infra/config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string): string => readFileSync(join(root, file), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  secrets?: (string | { source: string; target?: string })[];
  ports?: (string | number | { host_ip?: string; published?: string | number; target: number })[];
  network_mode?: string;
  depends_on?: Record<string, { condition?: string }> | string[];
}
interface ComposeFile {
  services: Record<string, Service>;
  secrets?: Record<string, { file?: string; environment?: string }>;
}

// Merge keys (`<<: *aivyx`) are resolved as Compose resolves them.
const compose = parse(read('compose.yaml'), { merge: true }) as ComposeFile;
const services = Object.entries(compose.services);
/** The services that run the aivyx image (built from this checkout). */
const aivyxServices = services.filter(([, s]) => s.build !== undefined);
const argv = (s: Service): string[] => (Array.isArray(s.command) ? s.command : (s.command ?? '').split(/\s+/).filter(Boolean));
const env = (s: Service): Record<string, string> =>
  Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]));
const secretNames = (s: Service): string[] => (s.secrets ?? []).map((x) => (typeof x === 'string' ? x : x.source));

/**
 * A validator for the official Compose Specification schema: test/fixtures/compose-spec/compose-spec.json is
 * schema/compose-spec.json of github.com/compose-spec/compose-spec (Apache-2.0) at commit
 * 170098ba07d9f53c383a41bfd4c5166b0a4529a6 (the file last changed in a08f8d51, 2025-10-21).
 */
function composeValidator() {
  const schema = JSON.parse(read('test/fixtures/compose-spec/compose-spec.json')) as { $schema: string };
  const ajv = new Ajv({ allErrors: true, strict: false });
  // The schema names draft-07 by its https spelling; ajv knows draft-07 by the http one.
  ajv.addMetaSchema({ ...(ajv.getSchema('http://json-schema.org/draft-07/schema')?.schema as object), $id: schema.$schema });
  return ajv.compile(schema);
}

describe('compose.yaml against the Compose Specification', () => {
  const validate = composeValidator();

  it('validates against the official JSON schema', () => {
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
  });

  it('rejects what the schema forbids (the check can fail)', () => {
    expect(validate({ services: { worker: { image: 'aivyx:local', replicas: 3 } } })).toBe(false);
    expect(validate({ services: { worker: { image: 'aivyx:local', depends_on: { x: { condition: 'healthy' } } } } })).toBe(false);
  });
});

describe('the aivyx services run commands the CLI has', () => {
  const home = mkdtempSync(join(tmpdir(), 'aivyx-compose-'));
  // The compiled CLI when dist/ is fresh (`npm run build`), else the sources through tsx: as the image runs it.
  const help = spawnSync(process.execPath, ['app/bin.js', '--help'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: home, AIVYX_HOME: home },
    encoding: 'utf8',
    timeout: 120_000,
  });

  it('prints its usage', () => {
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toContain('usage:');
  });

  it.each(aivyxServices)('%s: `node app/bin.js <command>` is in the usage, with its flags', (_name, service) => {
    const [node, bin, ...args] = argv(service);
    expect([node, bin]).toEqual(['node', 'app/bin.js']);
    const words = args.filter((a) => !a.startsWith('-'));
    expect(words.length).toBeGreaterThan(0);
    const usageLine = new RegExp(`^\\s*aivyx ${words.join(' ')}(\\s|$)`, 'm');
    expect(help.stdout).toMatch(usageLine);
    for (const flag of args.filter((a) => a.startsWith('--'))) expect(help.stdout).toContain(flag);
  });

  it('has the roles a cluster needs: workers (scaled), one gateway, the one-shot Temporal setup', () => {
    const commands = aivyxServices.map(([, s]) => argv(s).slice(2).join(' '));
    expect(commands).toEqual(expect.arrayContaining(['temporal setup', 'gateway']));
    expect(commands.some((c) => c.startsWith('worker'))).toBe(true);
    expect((compose.services.worker as { deploy?: { replicas?: number } }).deploy?.replicas).toBeGreaterThan(1);
  });

  it('the image runs the CLI package.json names', () => {
    const pkg = JSON.parse(read('package.json')) as { bin: Record<string, string> };
    expect(pkg.bin.aivyx).toBe('app/bin.js');
  });

  it('every aivyx variable the services set is one aivyx reads', () => {
    const known = new Set(Object.keys(ENV_TABLE));
    for (const [name, service] of aivyxServices)
      for (const key of Object.keys(env(service))) expect(known.has(key), `${name}: ${key} is not in infra/config/env-table.ts`).toBe(true);
  });

  it('the aivyx roles start after the namespace is set up', () => {
    for (const [name, service] of aivyxServices) {
      if (name === 'temporal-setup') continue;
      expect(service.depends_on, name).toMatchObject({ 'temporal-setup': { condition: 'service_completed_successfully' } });
    }
  });
});

describe('secrets and exposure', () => {
  it('the passphrase is a Compose secret read from a file, never an environment value', () => {
    expect(aivyxServices.length).toBeGreaterThan(0);
    for (const [name, service] of services) {
      const vars = env(service);
      expect(vars.AIVYX_PASSPHRASE, `${name} sets AIVYX_PASSPHRASE`).toBeUndefined();
      if (!aivyxServices.some(([n]) => n === name)) continue;
      const file = vars.AIVYX_PASSPHRASE_FILE ?? '';
      const secret = /^\/run\/secrets\/([\w.-]+)$/.exec(file)?.[1];
      expect(secret, `${name}: AIVYX_PASSPHRASE_FILE=${file}`).toBeDefined();
      expect(secretNames(service)).toContain(secret);
      expect(compose.secrets?.[secret ?? '']?.file, `secret ${secret}`).toBeDefined();
    }
  });

  it('the secret files compose.yaml names are gitignored and kept out of the image', () => {
    const dockerignore = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim().replace(/^\//, ''));
    const files = Object.values(compose.secrets ?? {}).flatMap((s) => (s.file ? [s.file] : []));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const ignored = spawnSync('git', ['check-ignore', '--quiet', '--no-index', file], { cwd: root });
      expect(ignored.status, `${file} is not gitignored`).toBe(0);
      expect(dockerignore, `${file} is not in .dockerignore (COPY . . would bake it into the image)`).toContain(file.replace(/^\.\//, ''));
    }
    // The .env that holds POSTGRES_PASSWORD for interpolation, too.
    expect(spawnSync('git', ['check-ignore', '--quiet', '--no-index', '.env'], { cwd: root }).status).toBe(0);
    expect(dockerignore).toContain('.env');
  });

  it('every published port is bound to 127.0.0.1', () => {
    for (const [name, service] of services)
      for (const port of service.ports ?? []) {
        const hostIp = typeof port === 'object' ? port.host_ip : String(port).split(':').length === 3 ? String(port).split(':')[0] : '';
        expect(hostIp, `${name} publishes ${JSON.stringify(port)}`).toBe('127.0.0.1');
      }
  });

  it("the gateway's REST and codec servers are on the host's loopback, where the UI looks for the codec endpoint", () => {
    const gateway = compose.services.gateway as Service;
    const ui = compose.services['temporal-ui'] as Service;
    const vars = env(gateway);
    // Both servers refuse any bind address but loopback: only the host's network namespace puts them on the host's 127.0.0.1.
    expect(gateway.network_mode).toBe('host');
    expect(gateway.ports ?? []).toEqual([]);
    expect(vars.TEMPORAL_ADDRESS).toMatch(/^127\.0\.0\.1:/);
    // (Not parsed as a URL: its password is still a Compose interpolation here.)
    expect(vars.DATABASE_URL).toMatch(/@127\.0\.0\.1:5432\//);
    expect(env(ui).TEMPORAL_CODEC_ENDPOINT).toBe(`http://127.0.0.1:${vars.AIVYX_CODEC_PORT}`);
    // The codec server grants CORS to http://127.0.0.1:<AIVYX_UI_PORT>: the UI must be published there.
    expect(ui.ports).toContain(`127.0.0.1:${vars.AIVYX_UI_PORT}:8080`);
    expect(env(ui).TEMPORAL_CORS_ORIGINS).toBe(`http://127.0.0.1:${vars.AIVYX_UI_PORT}`);
    // What the gateway reaches on the host's loopback is published there.
    const published = services.flatMap(([, s]) => (s.ports ?? []).map(String));
    expect(published).toEqual(expect.arrayContaining([`127.0.0.1:${vars.TEMPORAL_ADDRESS?.split(':')[1]}:7233`, '127.0.0.1:5432:5432']));
  });
});

describe('the image', () => {
  const dockerfile = existsSync(join(root, 'Dockerfile')) ? read('Dockerfile') : '';
  const runs = dockerfile
    .split('\n')
    .filter((l) => l.startsWith('RUN '))
    .map((l) => l.slice(4));

  it('is built by the Dockerfile on Node 20', () => {
    expect(dockerfile).not.toBe('');
    for (const [name, service] of aivyxServices) expect(service.build, name).toBe('.');
    const bases = dockerfile.split('\n').filter((l) => l.startsWith('FROM '));
    expect(bases.length).toBeGreaterThan(0);
    for (const base of bases) expect(base).toMatch(/^FROM node:20[.-]/);
  });

  it('installs from the lockfile and builds with package.json build script', () => {
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts.build).toBeDefined();
    expect(runs.some((r) => /\bnpm ci\b/.test(r))).toBe(true);
    expect(runs.some((r) => /\bnpm run build\b/.test(r))).toBe(true);
    // The build writes dist/.built last: app/bin.js runs dist/ only when that stamp is there.
    expect(pkg.scripts.build).toContain('dist/.built');
  });
});
