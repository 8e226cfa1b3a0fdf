/**
 * What the owner sees and changes of the assistant's learned skills and knowledge graph (`aivyx
 * skills`, `aivyx graph`, the REST channel's /v1/skills and /v1/graph routes). No back door: each
 * operation needs the scope the tools would need from the agent's capabilities under the Trusted
 * ceiling. Storing a new skill version is not here: it goes through `skills.propose` and its gate,
 * so the approval binds the exact text.
 */
import type { GraphStore } from '../activities/tools/graph-port.js';
import type { SkillStore, SkillSummary, StoredSkill } from '../activities/tools/skill-port.js';
import { CapabilitySet, tierCeiling } from '../core/capability/index.js';
import type { TierPolicy } from '../core/capability/tier-policy.js';
import { AivyxError } from '../core/errors.js';
import { SKILL_NAME } from '../core/tools/skill-fields.js';
import type { AuditPort } from '../activities/ports.js';
import { randomUUID } from 'node:crypto';

/** The owner's view of skills and the graph's vocabulary. */
export interface OwnerSkills {
  list(): Promise<SkillSummary[]>;
  /** One skill's latest version (or `version`); NotFound when none, CapabilityDenied when it does not verify. */
  show(name: string, version?: number): Promise<StoredSkill>;
  /** Retires every version of `name`, audited as done `by` (default: the owner at the CLI or REST). */
  retire(name: string, by?: OwnerActor): Promise<{ retired: number }>;
  predicates(): Promise<string[]>;
  addPredicate(predicate: string, by?: OwnerActor): Promise<{ predicates: string[] }>;
}

/** Who changed the owner's skills or vocabulary, as their channel authenticated them. */
export interface OwnerActor {
  identity: string;
  channel: string;
}

/** The owner at a local channel (the CLI goes through REST). */
const LOCAL: OwnerActor = { identity: 'local-user', channel: 'rest' };

/** The owner's skills and graph vocabulary over the stores, checked like the tools. */
export function createOwnerSkills(deps: {
  skills: SkillStore;
  graph: GraphStore;
  capabilities: readonly string[];
  tierPolicy?: TierPolicy;
  /** Where retiring a skill and adding a predicate are recorded. */
  audit?: AuditPort;
}): OwnerSkills {
  const record = async (action: 'retire' | 'add-predicate', subject: string, by: OwnerActor, versions?: number): Promise<void> => {
    await deps.audit?.append(`owner/skills/${action}/${subject}/${randomUUID()}`, {
      type: 'OwnerSkillsChanged',
      turnId: 'owner/skills',
      action,
      subject,
      ...(versions !== undefined ? { versions } : {}),
      by: by.identity,
      channel: by.channel,
    });
  };
  const held = CapabilitySet.from([...deps.capabilities]).intersect(tierCeiling('Trusted', deps.tierPolicy));
  const need = (scope: string, what: string): void => {
    if (!held.grants(scope))
      throw new AivyxError('CapabilityDenied', `${what} needs ${scope}, which the assistant does not hold`, {
        detail: { scope, held: held.toJSON() },
        hint: 'add it to AIVYX_CAPABILITIES',
      });
  };
  const named = (name: string): string => {
    if (!SKILL_NAME.test(name)) throw new AivyxError('InvalidScope', `"${name}" is not a skill name`, { hint: 'see `aivyx skills list`' });
    return name;
  };
  return {
    async list() {
      need('skills.list', 'listing skills');
      return deps.skills.list();
    },
    async show(name, version) {
      need('skills.invoke', 'showing a skill');
      const skill = await deps.skills.get(named(name), version);
      if (!skill) throw new AivyxError('NotFound', `no approved skill named "${name}"`, { detail: { kind: 'skill', id: name } });
      return skill;
    },
    async retire(name, by = LOCAL) {
      // Retiring changes what the assistant is shown: the same authority as proposing.
      need('skills.propose', 'retiring a skill');
      const retired = await deps.skills.retire(named(name));
      if (retired > 0) await record('retire', name, by, retired);
      return { retired };
    },
    async predicates() {
      need('graph.read', 'listing predicates');
      return deps.graph.predicates();
    },
    async addPredicate(predicate, by = LOCAL) {
      need('graph.write', 'adding a predicate');
      await deps.graph.addPredicate(predicate);
      await record('add-predicate', predicate, by);
      return { predicates: await deps.graph.predicates() };
    },
  };
}
