/**
 * `graph.write`: store relations `(subject) predicate (object)` in the knowledge graph. An effect
 * (after untrusted content it is gated like memory.write); each relation keeps the label of the
 * untrusted content the turn had read, and a query that returns it carries that label.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { says } from './fields.js';
import { GRAPH_MAX_WRITE, entityKindField, entityNameField, predicateField, type EntityRef } from './graph-fields.js';

/** One relation as written. */
export interface RelationInput {
  subject: EntityRef;
  predicate: string;
  object: EntityRef;
}

/** Validated input of `graph.write`. */
export interface GraphWriteInput {
  relations: RelationInput[];
}

const entity = (field: string) =>
  z
    .strictObject({ name: entityNameField(`${field}.name`, 'The name.'), kind: entityKindField(`${field}.kind`, 'What it is.') })
    .describe(`The ${field}: {name, kind}.`);

export const graphWriteTool = defineTool({
  id: 'graph.write',
  summary: 'Remember facts as relations between people, projects, places',
  description:
    'Remember facts as relations (subject) predicate (object), e.g. {subject:{name:"Dana",kind:"person"}, predicate:"works_on", object:{name:"Ledger",kind:"project"}}. Kinds: person, organisation, project, place, event, thing. Predicates come from the owner\'s vocabulary (works_on, works_for, member_of, has_accountant, knows, ...). Returns {stored}.',
  input: () =>
    z.strictObject({
      relations: z
        .array(
          z.strictObject({ subject: entity('subject'), predicate: predicateField('predicate', 'The relation.'), object: entity('object') }),
          {
            error: says('"relations" must be a list of {subject, predicate, object}'),
          },
        )
        .min(1, { error: says('"relations" must hold at least one relation') })
        .max(GRAPH_MAX_WRITE, { error: says(`"relations" may hold at most ${GRAPH_MAX_WRITE} relations`, 'split it over several calls') })
        .describe('The relations to store.'),
    }),
  canonical: ({ relations }): GraphWriteInput => ({
    relations: relations.map((r) => ({
      subject: { name: r.subject.name.trim(), kind: r.subject.kind },
      predicate: r.predicate,
      object: { name: r.object.name.trim(), kind: r.object.kind },
    })),
  }),
  scope: { base: 'graph.write' },
  idempotency: 'natural',
  // Relations are data, like a memory: each keeps the label of the turn that wrote it.
  provenance: { output: 'trusted', effect: true, contentFields: ['relations'] },
});

export const parseGraphWriteInput = graphWriteTool.parse;
