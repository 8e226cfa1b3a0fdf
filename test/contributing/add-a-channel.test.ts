/**
 * docs/CONTRIBUTING.md "Adding a channel" is true: a copy of this repository with the folder its table
 * names, the one registry line and its two rows of the configuration table runs the example channel
 * through the contract — its settings read through the table, a real turn arrives
 * from it and is answered on it, and a sender the channel does not trust gets the lower tier (the copy's
 * own test, test/fixtures/add-a-channel/test/channels/lines.test.ts).
 */
import { describe, inject } from 'vitest';
import { describeWalkthrough } from '../support/repo-copy.js';

describe('adding a channel (docs/CONTRIBUTING.md)', () => {
  describeWalkthrough(
    {
      heading: 'Adding a channel',
      fixture: 'test/fixtures/add-a-channel',
      marker: '// New channels go above this line',
      newFiles: ['channels/lines/channel.ts', 'test/channels/lines.test.ts'],
      registryFiles: ['channels/registry.ts', { path: 'infra/config/env-table.ts', imports: 0, entries: 2 }],
      test: 'test/channels/lines.test.ts',
      passed: 'LINES_SCENARIO_PASSED',
      shows: 'the example channel answers a real turn, and a sender it does not list is Untrusted',
    },
    () => inject('temporalAddress'),
  );
});
