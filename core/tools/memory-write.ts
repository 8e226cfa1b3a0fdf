/** `memory.write`: store one note; a retried call stores it once. */
import { z } from 'zod';
import { defineTool, fieldError } from './define-tool.js';
import { textField } from './fields.js';
import { MEMORY_MAX_TEXT, memoryFilter, memoryFilterFields, memoryQualifier, type MemoryFilter } from './memory-fields.js';

/** Validated input of `memory.write`. */
export interface MemoryWriteInput extends MemoryFilter {
  text: string;
}

export const memoryWriteTool = defineTool({
  id: 'memory.write',
  description: 'Remember a note. public:true (with a topic) makes it readable from untrusted channels. Returns {id, at}.',
  input: () =>
    z.strictObject({
      text: textField('text', MEMORY_MAX_TEXT, 'What to remember.', { longHint: 'store a summary, or split it into several entries' }),
      ...memoryFilterFields(),
    }),
  canonical: ({ text, ...rest }): MemoryWriteInput => {
    const filter = memoryFilter(rest);
    if (filter.public && filter.topic === undefined)
      throw fieldError('a public entry needs a "topic"', 'public entries are filed under scope:public:<topic>');
    return { text, ...filter };
  },
  scope: { base: 'memory.write', qualifier: memoryQualifier },
  idempotency: 'keyed',
  // What a turn remembers is its own note; a tainted turn's note is labelled when it is stored.
  provenance: { output: 'trusted', effect: true, contentFields: ['text', 'topic'] },
});

export const parseMemoryWriteInput = memoryWriteTool.parse;
