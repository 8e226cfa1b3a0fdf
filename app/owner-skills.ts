/**
 * What the owner sees and changes of the assistant's learned skills and knowledge graph (`aivyx
 * skills`, `aivyx graph`, the REST channel's /v1/skills and /v1/graph routes). No back door: each
 * operation needs the scope the tools would need from the agent's capabilities under the Trusted
 * ceiling. An edit stores nothing here either: it opens the gate a proposal opens
 * (app/owner-skill-edits.ts), so the approval binds the exact text.
 */
import type { GraphStore } from '../activities/tools/graph-port.js';
import type { SkillStore, SkillSummary, StoredSkill } from '../activities/tools/skill-port.js';
import { canonicalJson } from '../core/canonical-json.js';
import { skillProposeTool } from '../core/tools/skill-propose.js';
import type { SkillContent } from '../core/tools/skill-fields.js';
import type { OpenedEdit, SkillEditGates } from './owner-skill-edits.js';
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
  /**
   * Asks for a new version of an active skill: `changes` replace those parts of its latest version,
   * and the whole result waits at an approval gate like a proposal. Stores nothing by itself.
   * `requestKey` (the asking message's platform id): a redelivered message opens that gate once.
   */
  edit(name: string, changes: SkillChanges, by?: OwnerActor, requestKey?: string): Promise<OpenedEdit>;
  predicates(): Promise<string[]>;
  addPredicate(predicate: string, by?: OwnerActor): Promise<{ predicates: string[] }>;
}

/** The parts of a skill an edit replaces (the name stays). */
export type SkillChanges = Partial<Omit<SkillContent, 'name'>>;

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
  /** Where an edit waits for approval; none: edits are refused here. */
  edits?: SkillEditGates;
}): OwnerSkills {
  // `once`: a key the change is recorded under once (an edit's gate); otherwise every change is its own.
  const record = async (action: 'retire' | 'add-predicate' | 'edit', subject: string, by: OwnerActor, versions?: number, once?: string) => {
    await deps.audit?.append(`owner/skills/${action}/${subject}/${once ?? randomUUID()}`, {
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
    async edit(name, changes, by = LOCAL, requestKey) {
      need('skills.propose', 'editing a skill');
      if (!deps.edits)
        throw new AivyxError('NotFound', 'editing skills is not available here', { hint: 'use `aivyx skills edit` on the install' });
      const current = await deps.skills.get(named(name));
      if (!current)
        throw new AivyxError('NotFound', `no active skill named "${name}" to edit (never approved, or retired)`, {
          detail: { kind: 'skill', id: name },
          hint: 'a retired skill comes back only as a new proposal in a conversation',
        });
      const content = nextContent(current, changes);
      if (canonicalJson(content) === canonicalJson(contentOf(current)))
        throw new AivyxError('InvalidScope', `the edit of "${name}" changes nothing`, { hint: `v${current.version} stays as it is` });
      const opened = await deps.edits.open(content, current, by, requestKey);
      await record('edit', name, by, opened.version, opened.missionId);
      return opened;
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

/** A stored skill's content alone (what its approval hashed). */
const contentOf = (s: StoredSkill): SkillContent => ({
  name: s.name,
  summary: s.summary,
  whenToUse: s.whenToUse,
  steps: s.steps,
  tools: s.tools,
});

/** The content an edit proposes: the latest version with `changes` in place, checked and canonical as the tool takes it. */
function nextContent(current: StoredSkill, changes: SkillChanges): SkillContent {
  const { summary, whenToUse, steps, tools } = changes;
  return skillProposeTool.parse({
    ...contentOf(current),
    ...(summary !== undefined ? { summary } : {}),
    ...(whenToUse !== undefined ? { whenToUse } : {}),
    ...(steps !== undefined ? { steps } : {}),
    ...(tools !== undefined ? { tools } : {}),
  });
}
