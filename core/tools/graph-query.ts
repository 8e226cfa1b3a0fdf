/**
 * `graph.query`: a read-only multi-hop traversal (depth ≤ 3, bounded answers) from one entity along
 * a path of predicates. "Who else works on the projects my accountant is on?" is, from the
 * accountant: works_on (out), then works_on (in). Each answer is an entity other than those on its
 * path; the result carries the labels of every relation it followed.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { positiveIntField, says } from './fields.js';
import {
  GRAPH_DEFAULT_LIMIT,
  GRAPH_MAX_DEPTH,
  GRAPH_MAX_LIMIT,
  entityKindField,
  entityNameField,
  predicateField,
  type EntityKind,
} from './graph-fields.js';

/** One hop: along a predicate (any when absent), from subject to object (`out`) or back (`in`). */
export interface GraphHop {
  predicate?: string;
  direction: 'out' | 'in';
}

/** Validated input of `graph.query`. */
export interface GraphQueryInput {
  from: string;
  kind?: EntityKind;
  hops: GraphHop[];
  limit: number;
}

export const graphQueryTool = defineTool({
  id: 'graph.query',
  summary: 'Answer questions by walking relations in the knowledge graph',
  description:
    'Answer questions from the knowledge graph by walking relations from one entity: hops is a path of {predicate, direction} (out: subject→object, in: object→subject), 1 to 3 hops. E.g. who else works on the projects Dana works on: {from:"Dana", hops:[{predicate:"works_on",direction:"out"},{predicate:"works_on",direction:"in"}]}. Returns {answers: [{name, kind, via}], more}.',
  input: () =>
    z.strictObject({
      from: entityNameField('from', 'The entity to start from (its name).'),
      kind: entityKindField('kind', 'Its kind, when the name is ambiguous.').optional(),
      hops: z
        .array(
          z.strictObject({
            predicate: predicateField('predicate', 'The relation to follow (any when absent).').optional(),
            direction: z
              .enum(['out', 'in'], { error: says('"direction" must be "out" or "in"') })
              .describe('out: subject→object; in: object→subject.')
              .optional(),
          }),
          { error: says('"hops" must be a list of {predicate, direction}') },
        )
        .min(1, { error: says('"hops" must hold at least one hop') })
        .max(GRAPH_MAX_DEPTH, { error: says(`"hops" may hold at most ${GRAPH_MAX_DEPTH} hops`, 'ask a narrower question') })
        .describe('The path to walk.'),
      limit: positiveIntField('limit', GRAPH_MAX_LIMIT, `Most answers (default ${GRAPH_DEFAULT_LIMIT}).`).optional(),
    }),
  canonical: (p): GraphQueryInput => ({
    from: p.from.trim(),
    ...(p.kind ? { kind: p.kind } : {}),
    hops: p.hops.map((h) => ({ ...(h.predicate ? { predicate: h.predicate } : {}), direction: h.direction ?? 'out' })),
    limit: p.limit ?? GRAPH_DEFAULT_LIMIT,
  }),
  scope: { base: 'graph.read' },
  idempotency: 'natural',
  // Every relation keeps the label of what it was learned from; a result carries the union.
  provenance: { output: 'depends', effect: false },
});

export const parseGraphQueryInput = graphQueryTool.parse;
