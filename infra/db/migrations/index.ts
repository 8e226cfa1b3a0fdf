/**
 * Static migration list. Not FileMigrationProvider: we run under tsx and may be bundled,
 * so there is no directory to scan. Names sort by date prefix; kysely runs them in that order.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as foundation from './2026-12-02-0001-foundation.js';
import * as sealedRecords from './2026-12-02-0002-sealed-records.js';
import * as memoryIndex from './2026-12-02-0003-memory-index.js';
import * as authorityClaims from './2026-12-03-0005-authority-claims.js';
import * as toolCalls from './2026-12-03-0006-tool-calls.js';
import * as auditTree from './2026-12-03-0010-audit-tree.js';
import * as toolCallTaint from './2026-12-04-0011-tool-call-taint.js';
import * as installWrappedKey from './2026-12-04-0012-install-wrapped-key.js';
import * as llmSpend from './2026-12-05-0013-llm-spend.js';
import * as llmSpendAttempts from './2026-12-05-0014-llm-spend-attempts.js';
import * as skillsGraph from './2026-12-05-0015-skills-graph.js';
import * as llmSpendCache from './2026-12-05-0015-llm-spend-cache.js';
import * as llmSpendKind from './2026-12-05-0016-llm-spend-kind.js';

/** Every migration, keyed by its frozen name. */
export const migrations: Record<string, Migration> = {
  '2026-12-02-0001-foundation': foundation,
  '2026-12-02-0002-sealed-records': sealedRecords,
  '2026-12-02-0003-memory-index': memoryIndex,
  '2026-12-03-0005-authority-claims': authorityClaims,
  '2026-12-03-0006-tool-calls': toolCalls,
  '2026-12-03-0010-audit-tree': auditTree,
  '2026-12-04-0011-tool-call-taint': toolCallTaint,
  '2026-12-04-0012-install-wrapped-key': installWrappedKey,
  '2026-12-05-0013-llm-spend': llmSpend,
  '2026-12-05-0014-llm-spend-attempts': llmSpendAttempts,
  '2026-12-05-0015-skills-graph': skillsGraph,
  '2026-12-05-0015-llm-spend-cache': llmSpendCache,
  '2026-12-05-0016-llm-spend-kind': llmSpendKind,
};

/** kysely MigrationProvider over the static list. */
export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
