/**
 * The knowledge-graph store port the graph.* tools run over (its adapter is infra/graph-store.ts):
 * entities with sealed names found by blind index, relations that keep the label of what they were
 * learned from, and a bounded multi-hop traversal.
 */
import type { EntityKind } from '../../core/tools/graph-fields.js';
import type { GraphQueryInput } from '../../core/tools/graph-query.js';
import type { RelationInput } from '../../core/tools/graph-write.js';

/** An entity as a query returns it. */
export interface GraphEntity {
  name: string;
  kind: EntityKind;
}

/** One answer: the entity reached, and the entities it was reached through. */
export interface GraphAnswer extends GraphEntity {
  via: GraphEntity[];
}

/** What a query returns: the answers, whether there were more, and the labels of the relations followed. */
export interface GraphQueryResult {
  answers: GraphAnswer[];
  more: boolean;
  /** The untrusted sources of every relation on the returned paths (empty: all trusted). */
  labels: string[];
}

/** Write and query the graph. */
export interface GraphStore {
  /**
   * Stores relations (entities created as needed); `untrusted` labels each of them. A relation
   * already stored keeps its label, unless this write is trusted (the owner vouches for it now).
   * Refuses (InvalidScope) a predicate outside the vocabulary.
   */
  write(relations: readonly RelationInput[], opts: { at: number; untrusted?: string }): Promise<{ stored: number }>;
  /** Walks `hops` from the entities named `from`. */
  query(input: GraphQueryInput): Promise<GraphQueryResult>;
  /** The predicate vocabulary: the defaults and what the owner added. */
  predicates(): Promise<string[]>;
  /** Adds a predicate to the vocabulary (the owner's). */
  addPredicate(predicate: string): Promise<void>;
}
