/** Committed workflow histories keep replaying: a change that alters command order needs `patched()`. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../../app/worker.js';

const dir = join(import.meta.dirname, '../histories');
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('replay of committed histories', () => {
  it('has histories to replay', () => {
    expect(files.length).toBeGreaterThan(0);
  });
  it.each(files)(
    '%s replays without nondeterminism',
    async (file) => {
      const history = JSON.parse(readFileSync(join(dir, file), 'utf8')) as unknown;
      // Throws DeterminismViolationError (or any replay failure) when the code no longer matches.
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history as never, file.replace(/\.json$/, ''));
    },
    120_000,
  );
});
