/**
 * The memory store port the memory.* tools run over (its adapter is infra/memory-store.ts): activities
 * see this interface only, so the kysely and sealing details stay in infra.
 */
import type { MemoryForgetInput } from '../../core/tools/memory-forget.js';
import type { MemoryRecallInput } from '../../core/tools/memory-recall.js';
import type { MemoryWriteInput } from '../../core/tools/memory-write.js';

/** One remembered note, as stored (sealed) and returned. `at` is epoch ms. */
export interface MemoryEntry {
  id: string;
  text: string;
  at: number;
  session?: string;
  topic?: string;
  public?: boolean;
  /** Written by a turn that had read untrusted content: where it came from. A recall of it taints the recalling turn. */
  untrusted?: string;
}

/** What a recall returns: the best `limit` entries, and whether more matched. */
export interface RecallResult {
  entries: MemoryEntry[];
  more: boolean;
}

/** Write/recall/forget over the sealed domain and the blind index. */
export interface MemoryStore {
  /** The deterministic memory id for an activity's idemKey (a keyed hash: ids do not reveal turn ids). */
  idFor(idemKey: string): string;
  /** Stores an entry at `id`; a second write of the same id returns the first entry (`created: false`). */
  write(input: MemoryWriteInput, opts: { id: string; at: number; untrusted?: string }): Promise<{ entry: MemoryEntry; created: boolean }>;
  /** Bulk import (benchmarks, migrations): one index insert per batch, entries sealed concurrently. */
  writeMany(items: readonly { input: MemoryWriteInput; id: string; at: number }[]): Promise<void>;
  /** Ranked recall within the filter and range. */
  recall(input: MemoryRecallInput): Promise<RecallResult>;
  /** Forgets one entry by id (only if it matches the filter), or every entry matching the filter and range. */
  forget(input: MemoryForgetInput): Promise<{ forgotten: number }>;
  /** True when a sealed entry exists at `id`. */
  has(id: string): Promise<boolean>;
  /** The entry at `id`, or undefined. */
  get(id: string): Promise<MemoryEntry | undefined>;
  /** A keyed tag of a query for the MemoryAccess audit entry: equal queries are linkable, never readable. */
  queryTag(query: string | undefined): string;
}
