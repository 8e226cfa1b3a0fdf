/** `memory.forget`: delete one note by id, or every note matching a filter and range. */
import { z } from 'zod';
import { defineTool, fieldError } from './define-tool.js';
import { patternField } from './fields.js';
import {
  MEMORY_ID,
  memoryFilter,
  memoryFilterFields,
  memoryQualifier,
  memoryRange,
  memoryRangeFields,
  type MemoryFilter,
} from './memory-fields.js';

/** Validated input of `memory.forget`: one entry by `id`, or every entry matching the filter and range. */
export interface MemoryForgetInput extends MemoryFilter {
  id?: string;
  from?: number;
  to?: number;
}

export const memoryForgetTool = defineTool({
  id: 'memory.forget',
  summary: 'Forget notes by id or by filter',
  description: 'Forget one note by id, or all notes matching the filter and time range. Returns {forgotten}.',
  input: () =>
    z.strictObject({
      id: patternField(
        'id',
        MEMORY_ID,
        'must be a memory id (m_ and 32 hex digits)',
        'A memory id (m_…).',
        'use an id returned by memory.write or memory.recall',
      ).optional(),
      ...memoryFilterFields(),
      ...memoryRangeFields(),
    }),
  canonical: ({ id, from, to, ...rest }): MemoryForgetInput => {
    const out: MemoryForgetInput = { ...memoryFilter(rest), ...memoryRange({ from, to }), ...(id === undefined ? {} : { id }) };
    // An empty forget would silently mean "everything": it has to be asked for with a filter or a range.
    if (Object.keys(out).length === 0)
      throw fieldError('give an "id", a filter (session, topic, public) or a time range', 'forgetting everything is not a single call');
    return out;
  },
  scope: { base: 'memory.forget', qualifier: memoryQualifier },
  // Deleting what is already gone changes nothing.
  idempotency: 'natural',
  provenance: { output: 'trusted', effect: true },
});

export const parseMemoryForgetInput = memoryForgetTool.parse;
