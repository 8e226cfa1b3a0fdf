/**
 * docs/CONTRIBUTING.md "Adding a tool" is true: applied to a copy of this repository — the files its
 * table names, the registry lines it shows and nothing else — the example tool runs through a real
 * worker (the copy's own test, test/fixtures/add-a-tool/test/activities/fs-count.test.ts): offered to
 * the model, audited with its canonical scope, Denied outside its grant, a wrong field refused.
 */
import { describe, inject } from 'vitest';
import { describeWalkthrough } from '../support/repo-copy.js';

describe('adding a tool (docs/CONTRIBUTING.md)', () => {
  describeWalkthrough(
    {
      heading: 'Adding a tool',
      fixture: 'test/fixtures/add-a-tool',
      marker: '// New tools go above this line',
      newFiles: ['core/tools/fs-count.ts', 'activities/tools/fs-count.ts', 'test/activities/fs-count.test.ts'],
      registryFiles: ['core/tool-catalog.ts', 'app/wiring.ts'],
      test: 'test/activities/fs-count.test.ts',
      passed: 'FS_COUNT_SCENARIO_PASSED',
      shows: 'fs.count runs through a real worker, audited with its canonical scope, and is denied outside its grant',
    },
    () => inject('temporalAddress'),
  );
});
