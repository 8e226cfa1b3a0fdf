/**
 * What the owner sees and forgets of the assistant's memory (`aivyx memory list|show|forget`, the
 * REST channel's /v1/memory routes): no back door. Each operation needs the scope the memory tools
 * would need (`memory.read`, `memory.forget:<partition>`) from the agent's capabilities under the
 * Trusted ceiling — the REST channel's tier — and writes the same `MemoryAccess` audit entry.
 */
import { randomUUID } from 'node:crypto';
import type { AuditPort } from '../activities/ports.js';
import type { MemoryEntry, MemoryStore, RecallResult } from '../activities/tools/memory-port.js';
import { CapabilitySet, tierCeiling } from '../core/capability/index.js';
import type { TierPolicy } from '../core/capability/tier-policy.js';
import type { MemoryOperation } from '../core/audit-events.js';
import { AivyxError } from '../core/errors.js';
import { memoryForgetTool } from '../core/tools/memory-forget.js';
import { memoryRecallTool } from '../core/tools/memory-recall.js';

/** The owner's view of memory. */
export interface OwnerMemory {
  /** Entries matching a `memory.recall` input (query, topic, session, public, range, limit). */
  list(input: unknown): Promise<RecallResult>;
  show(id: string): Promise<MemoryEntry>;
  forget(id: string): Promise<{ forgotten: number }>;
}

/** The owner's memory over the store, checked and audited like the tools. */
export function createOwnerMemory(deps: {
  store: MemoryStore;
  audit: AuditPort;
  capabilities: readonly string[];
  tierPolicy?: TierPolicy;
}): OwnerMemory {
  const held = CapabilitySet.from([...deps.capabilities]).intersect(tierCeiling('Trusted', deps.tierPolicy));
  const checked = async (operation: MemoryOperation, scope: string, queryOrKey: string): Promise<void> => {
    if (!held.grants(scope))
      throw new AivyxError(
        'CapabilityDenied',
        `the owner's memory ${operation.toLowerCase()} needs ${scope}, which the assistant does not hold`,
        {
          detail: { scope, held: held.toJSON() },
          hint: 'add it to AIVYX_CAPABILITIES',
        },
      );
    const id = randomUUID();
    await deps.audit.append(`owner-memory/${id}`, { type: 'MemoryAccess', turnId: `owner/cli/${id}`, operation, scope, queryOrKey });
  };
  return {
    async list(raw) {
      const input = memoryRecallTool.parse(raw ?? {});
      await checked('Read', memoryRecallTool.requiredScope(raw ?? {}), `query:${deps.store.queryTag(input.query)}`);
      return deps.store.recall(input);
    },
    async show(id) {
      await checked('Read', memoryRecallTool.requiredScope({}), id);
      const entry = await deps.store.get(id);
      if (!entry) throw new AivyxError('NotFound', `no memory ${id}`, { detail: { kind: 'memory', id } });
      return entry;
    },
    async forget(id) {
      const input = memoryForgetTool.parse({ id });
      await checked('Forget', memoryForgetTool.requiredScope({ id }), id);
      return deps.store.forget(input);
    },
  };
}
