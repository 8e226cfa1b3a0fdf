/** `memory.recall`: find notes by words, tags and time range, best match then newest first. */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { positiveIntField, says } from './fields.js';
import {
  MEMORY_DEFAULT_LIMIT,
  MEMORY_MAX_LIMIT,
  memoryFilter,
  memoryFilterFields,
  memoryQualifier,
  memoryRange,
  memoryRangeFields,
  type MemoryFilter,
} from './memory-fields.js';

/** Validated input of `memory.recall`; `from` (inclusive) and `to` (exclusive) are epoch ms. */
export interface MemoryRecallInput extends MemoryFilter {
  query?: string;
  from?: number;
  to?: number;
  limit: number;
}

export const memoryRecallTool = defineTool({
  id: 'memory.recall',
  description: 'Recall notes: best match for the query, then newest. Returns {entries: [{id, at, text, topic?}], more}.',
  input: () =>
    z.strictObject({
      query: z
        .string({ error: says('"query" must be a string of at most 1000 characters') })
        .max(1000, { error: says('"query" must be a string of at most 1000 characters') })
        .describe('Words to look for.')
        .optional(),
      ...memoryFilterFields(),
      ...memoryRangeFields(),
      limit: positiveIntField('limit', MEMORY_MAX_LIMIT, `Default ${MEMORY_DEFAULT_LIMIT}.`).optional(),
    }),
  canonical: ({ query, from, to, limit, ...rest }): MemoryRecallInput => ({
    ...memoryFilter(rest),
    ...memoryRange({ from, to }),
    limit: limit ?? MEMORY_DEFAULT_LIMIT,
    ...(query !== undefined && query.trim() !== '' ? { query } : {}),
  }),
  scope: { base: 'memory.read', qualifier: memoryQualifier },
  idempotency: 'natural',
  // Entries carry their own label (a note written after untrusted input stays untrusted).
  provenance: { output: 'depends', effect: false },
});

export const parseMemoryRecallInput = memoryRecallTool.parse;
