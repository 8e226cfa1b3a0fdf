/**
 * What the graph tools share (issue 35, seed Chapter Lattice): entity kinds, the predicate
 * vocabulary, and how an entity is named. Entity names are sealed at rest and found by a keyed
 * hash of their normalized form, so "Dana Reyes" and "dana  reyes" are the same entity.
 */
import { z } from 'zod';
import { patternField, says, textField } from './fields.js';

/** The entity kinds of the seed's typed graph. */
export const ENTITY_KINDS = ['person', 'organisation', 'project', 'place', 'event', 'thing'] as const;
/** One of {@link ENTITY_KINDS}. */
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** A predicate: a lower-case snake_case verb phrase. */
export const PREDICATE = /^[a-z][a-z0-9_]{1,39}$/;

/**
 * The predicates every graph knows; the owner adds more (`aivyx graph predicates add`). A relation
 * reads `(subject) predicate (object)`: `(Dana) works_on (Ledger)`, `(me) has_accountant (Dana)`.
 */
export const DEFAULT_PREDICATES: readonly string[] = Object.freeze([
  'works_on',
  'works_for',
  'works_with',
  'member_of',
  'manages',
  'reports_to',
  'knows',
  'has_accountant',
  'has_doctor',
  'has_lawyer',
  'related_to',
  'lives_in',
  'located_in',
  'part_of',
  'owns',
  'attends',
  'organises',
]);

/** Longest entity name (characters). */
export const ENTITY_NAME_MAX = 200;
/** Deepest traversal a query may ask for. */
export const GRAPH_MAX_DEPTH = 3;
/** Most answers one query returns. */
export const GRAPH_MAX_LIMIT = 50;
/** Answers a query returns when it does not say. */
export const GRAPH_DEFAULT_LIMIT = 20;
/** Most relations one graph.write stores. */
export const GRAPH_MAX_WRITE = 20;

/** An entity as written: its name and kind. */
export interface EntityRef {
  name: string;
  kind: EntityKind;
}

/** The normalized form a name is looked up by: NFKC, case-folded, inner whitespace collapsed. */
export function normalizeEntityName(name: string): string {
  return name.normalize('NFKC').toLowerCase().trim().replace(/\s+/g, ' ');
}

/** An entity name field. */
export const entityNameField = (field: string, description: string) =>
  textField(field, ENTITY_NAME_MAX, description).refine((v) => !/\p{Cc}/u.test(v), {
    error: says(`"${field}" must be one line of text`),
  });

/** An entity kind field. */
export const entityKindField = (field: string, description: string) =>
  z.enum(ENTITY_KINDS, { error: says(`"${field}" must be one of ${ENTITY_KINDS.join(', ')}`) }).describe(description);

/** A predicate field. */
export const predicateField = (field: string, description: string) =>
  patternField(field, PREDICATE, 'must be a lower-case snake_case predicate, e.g. "works_on"', description);
