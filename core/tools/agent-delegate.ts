/**
 * `agent.delegate` as the core knows it (pure, workflow-safe): the lead asks one owner-defined
 * specialist (core/specialists.ts) for a task. The activity attests the child turn's request (the
 * lead's set ∩ the specialist's, bound to the child's workflow id); the workflow runs that child and
 * gives its answer back as this call's result (workflows/turn-delegate.ts). Scope
 * `agent.delegate:<specialist>`.
 */
import { z } from 'zod';
import { SPECIALIST_NAME } from '../specialists.js';
import { defineTool } from './define-tool.js';
import { patternField, textField } from './fields.js';

/** Validated input of `agent.delegate`. */
export interface AgentDelegateInput {
  specialist: string;
  task: string;
}

/** `agent.delegate`: one specialist does one task; its answer is the result. */
export const agentDelegateTool = defineTool({
  id: 'agent.delegate',
  description:
    'Ask one specialist to do a task and get its answer back. Several calls in one step run in parallel (at most 9). The specialist sees only the task you write, so include everything it needs.',
  input: () =>
    z.strictObject({
      specialist: patternField('specialist', SPECIALIST_NAME, 'must be a specialist name', 'Which specialist, e.g. researcher or writer.'),
      task: textField('task', 8_000, 'The task, complete: the specialist sees nothing else.'),
    }),
  scope: { base: 'agent.delegate', qualifier: (i: AgentDelegateInput) => i.specialist },
  // The child's workflow id derives from the call: a retried call finds the child it started.
  idempotency: 'natural',
  // The activity's output is the worker's own attestation; the answer the model then sees is labelled by
  // the workflow from the child's taint (untrusted when the child read untrusted content). The child's
  // own effects pass the untrusted-content rule in the child, which inherits the lead's taint.
  provenance: { output: 'trusted', effect: false, contentFields: ['task'] },
});
