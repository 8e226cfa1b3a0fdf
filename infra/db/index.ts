/** The database layer: schema types, opening/migrating, and the static migration list. */
export type {
  Database,
  InstallTable,
  AuditEntryTable,
  AuditHeadTable,
  ToolIntentTable,
  InstallRow,
  NewInstall,
  AuditEntryRecord,
  NewAuditEntry,
  AuditHeadRow,
  ToolIntentRow,
  NewToolIntent,
  ToolIntentUpdate,
} from './database.js';
export { openDatabase, migrateToLatest, type OpenDatabase, type OpenDatabaseOptions, type DatabaseKind } from './open-database.js';
export { migrations, migrationProvider } from './migrations/index.js';
