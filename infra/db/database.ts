/**
 * The kysely schema of the aivyx database: one `*Table` interface per table, with
 * `Selectable`/`Insertable` aliases. Column names are snake_case as in SQL; int8 columns
 * are `number` because `openDatabase` installs an int8 → Number parser (see there).
 */
import type { ColumnType, Generated, Insertable, Selectable, Updateable } from 'kysely';

/** The single install row (id = 1): how to re-derive and recognise the master key. */
export interface InstallTable {
  /** Always 1; a CHECK constraint makes a second install impossible. */
  id: number;
  /** Argon2id salt, lower-case hex (16 random bytes). */
  kdf_salt: string;
  /** Argon2id parameters as JSON text, e.g. `{"m":65536,"p":4,"t":3}`. */
  kdf_params: string;
  /** Key-check value (hex), see `keyCheckValue`. */
  kcv: string;
  /** The master key wrapped under the passphrase's key (hex nonce ‖ ciphertext); null: the derived key is the master key. */
  wrapped_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
}

/** One audit entry; `mac` chains it to the previous entry's `mac`. */
export interface AuditEntryTable {
  /** 1, 2, 3… without gaps; assigned under the audit_head row lock. */
  seq: number;
  /** Caller's idempotency key, e.g. `${workflowId}/${activityId}`; unique. */
  idem_key: string;
  /** The event's turnId when it has one (for per-turn views); not MACed separately. */
  turn_id: string | null;
  /** The event's `type`, denormalized for filtering. */
  event_type: string;
  /** RFC 8785 canonical JSON of the AuditEvent, exactly the bytes that were MACed. */
  event: string;
  recorded_at: Date;
  /** The previous entry's mac (64 zeros for seq 1). */
  prev_mac: string;
  /** Hex HMAC-SHA256(audit key, prevMac bytes ‖ utf8(body)). */
  mac: string;
}

/** The chain head (id = 1): its row lock serializes appends; seq/mac of the last entry. */
export interface AuditHeadTable {
  id: number;
  seq: number;
  mac: string;
  /**
   * The Merkle tree's right edge at `seq` leaves: the roots of its complete subtrees, largest
   * first, concatenated (32 bytes each, one per set bit of `seq`). The tree root folds from it.
   */
  frontier: Generated<Uint8Array>;
}

/** A complete Merkle subtree at a tile boundary: `level` a positive multiple of 8, immutable once written. */
export interface AuditTreeNodeTable {
  /** Height of the subtree: it covers 2^level entries. */
  level: number;
  /** Position at that level: entries idx·2^level + 1 … (idx + 1)·2^level. */
  idx: number;
  /** The RFC 6962 hash of that subtree (32 bytes). */
  hash: Uint8Array;
}

/** Intent record for at-most-once tools: written 'started' before the effect, 'finished' after. */
export interface ToolIntentTable {
  idem_key: string;
  tool: string;
  input_hash: string;
  state: 'started' | 'finished';
  /** Outcome JSON once finished. */
  outcome: string | null;
  created_at: Generated<Date>;
}

/** One sealed value: XChaCha20-Poly1305 under the domain subkey of key-schedule `version`. */
export interface SealedRecordTable {
  /** A StorageDomain, e.g. 'sessions'; also bound into the AAD. */
  domain: string;
  /** Caller's key within the domain (collation "C"); also bound into the AAD. */
  key: string;
  /** Key-schedule version number: 1 = 'aivyx-v1-storage', 2 = 'aivyx-v2-storage', … */
  version: number;
  /** 24 random bytes. */
  nonce: Uint8Array;
  /** Ciphertext ‖ 16-byte Poly1305 tag. */
  ciphertext: Uint8Array;
  updated_at: Generated<Date>;
}

/** Rotation state (id = 1): the key-schedule version every process seals new writes with. */
export interface StorageRotationTable {
  id: number;
  write_version: number;
  started_at: Date | null;
  finished_at: Date | null;
}

/** Memory blind index: HMAC of one normalized token (or tag) of one sealed memory entry. */
export interface MemoryTokenTable {
  /** Hex HMAC-SHA256 (128 bits) under the memory index key; never the token itself. */
  token_mac: string;
  /** The memory id (`m_…`), also the entry's sealed-record key suffix. */
  memory_key: string;
  /** The entry's creation time, epoch ms (see docs/MEMORY.md for why this is stored in clear). */
  created_at_ms: number;
}

/** One verified, single-use authority (see migration 0005): the first run to claim it holds it. */
export interface AuthorityClaimTable {
  /** What is claimed: `turn`, `mission`, `gate`, `gate-decision`, `grant-use`. */
  kind: string;
  /** Its id (turn id, mission id, gate id). */
  subject: string;
  /** The workflow execution that holds it. */
  workflow_id: string;
  run_id: string;
  /** Canonical JSON of what was verified (hashes, scopes, tiers, ids; never user text). */
  data: string;
  created_at: Generated<Date>;
}

/** One tool call as `runTool` recorded it (see migration 0006); `audit_seq` null = its ToolCall entry is owed. */
export interface ToolCallTable {
  idem_key: string;
  turn_id: string;
  call_id: string;
  tool: string;
  scope: string;
  input_hash: string;
  state: 'running' | 'done';
  outcome: string | null;
  started_at: Generated<Date>;
  finished_at: Date | null;
  audit_seq: number | null;
  /** JSON array of the untrusted sources the call was made after (migration 0011); null = none. */
  tainted_by: string | null;
  /** The label of an untrusted result; null = trusted. */
  untrusted_output: string | null;
}

/** One call of a model's tokens and cost (migration 0013): a turn's step or a quarantined read; summed per turn, session and UTC day. */
export interface LlmSpendTable {
  turn_id: string;
  /** The turn workflow's run and the activity attempt: every call of the model is a row of its own. */
  run_id: Generated<string>;
  attempt: Generated<number>;
  step: number;
  /** The session workflow id the turn belongs to. */
  session_key: string;
  /** `YYYY-MM-DD`, UTC, when the step ran. */
  day: string;
  /** The price-table key of the model (`openai:gpt-4o`, `scripted`). */
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** Of `input_tokens`, read from the provider's prompt cache / written to it (0 when it did not say). */
  cached_input_tokens: Generated<number>;
  cache_write_tokens: Generated<number>;
  /** Null when the model has no price. */
  cost_usd: number | null;
  /** What the model was called for (migration 0016): `step` (a turn's model step) or `quarantined-read` (value.read). */
  kind: Generated<string>;
  /** The tool call that asked the model (a quarantined read's); empty for a step. */
  call_id: Generated<string>;
}

/** One approved version of a learned skill (migration 0015); its content is a sealed record `skill/<name_mac>/<version>`. */
export interface SkillTable {
  /** Keyed HMAC of the skill's name; never the name. */
  name_mac: string;
  version: number;
  state: 'active' | 'retired';
  /** SHA-256 of the canonical content that was approved. */
  content_hash: string;
  /** MAC binding name, version, content hash and the approving gate (a forged or edited row fails it). */
  approval_mac: string;
  created_at_ms: number;
}

/** One knowledge-graph entity (migration 0015); its name is a sealed record `graph/entity/<id>`. */
export interface GraphEntityTable {
  /** `e_` + keyed HMAC of kind and normalized name. */
  id: string;
  /** Keyed HMAC of the normalized name (lookup without a kind). */
  name_mac: string;
  kind: string;
  created_at_ms: number;
}

/** One directed relation `(subject) predicate (object)` (migration 0015). */
export interface GraphRelationTable {
  id: string;
  subject_id: string;
  predicate: string;
  object_id: string;
  /** Null: learned from trusted content; else the id of a sealed label `graph/label/<id>`. */
  label_id: string | null;
  created_at_ms: number;
}

/** A predicate the owner added to the vocabulary (migration 0015). */
export interface GraphPredicateTable {
  predicate: string;
  created_at_ms: number;
}

/** The whole schema, as kysely's `Kysely<Database>` type parameter. */
export interface Database {
  install: InstallTable;
  audit_entries: AuditEntryTable;
  audit_head: AuditHeadTable;
  audit_tree_nodes: AuditTreeNodeTable;
  tool_intents: ToolIntentTable;
  sealed_records: SealedRecordTable;
  storage_rotation: StorageRotationTable;
  memory_tokens: MemoryTokenTable;
  authority_claims: AuthorityClaimTable;
  tool_calls: ToolCallTable;
  llm_spend: LlmSpendTable;
  skills: SkillTable;
  graph_entities: GraphEntityTable;
  graph_relations: GraphRelationTable;
  graph_predicates: GraphPredicateTable;
}

/** A row read from `install`. */
export type InstallRow = Selectable<InstallTable>;
/** A row to insert into `install`. */
export type NewInstall = Insertable<InstallTable>;
/** A row read from `audit_entries` (event still as canonical JSON text). */
export type AuditEntryRecord = Selectable<AuditEntryTable>;
/** A row to insert into `audit_entries`. */
export type NewAuditEntry = Insertable<AuditEntryTable>;
/** A row read from `audit_head`. */
export type AuditHeadRow = Selectable<AuditHeadTable>;
/** A row read from `tool_intents`. */
export type ToolIntentRow = Selectable<ToolIntentTable>;
/** A row to insert into `tool_intents`. */
export type NewToolIntent = Insertable<ToolIntentTable>;
/** A change to a `tool_intents` row. */
export type ToolIntentUpdate = Updateable<ToolIntentTable>;
/** A row read from `sealed_records`. */
export type SealedRecordRow = Selectable<SealedRecordTable>;
