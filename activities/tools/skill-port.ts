/**
 * The skill store port the skills.* tools run over (its adapter is infra/skill-store.ts): sealed,
 * versioned skills, each bound to the approval it was stored under.
 */
import type { SkillContent } from '../../core/tools/skill-fields.js';

/** The gate whose approval of this exact content let it be stored. */
export interface SkillApproval {
  missionId: string;
  gateId: string;
}

/** One approved version of a skill, opened and verified. `at` is epoch ms. */
export interface StoredSkill extends SkillContent {
  version: number;
  at: number;
  approval: SkillApproval;
  /** Proposed by a turn that had read untrusted content: where it came from. Loading it taints the turn. */
  untrusted?: string;
}

/** A listing line: what every turn may pay for. */
export interface SkillSummary {
  name: string;
  summary: string;
  version: number;
  untrusted?: string;
}

/** Store, list, load and retire approved skills. */
export interface SkillStore {
  /**
   * Stores approved content as the name's next version; content equal to the name's latest
   * active version is that version (a retried call stores it once).
   */
  store(
    content: SkillContent,
    opts: { approval: SkillApproval; at: number; untrusted?: string },
  ): Promise<{ skill: StoredSkill; created: boolean }>;
  /** The latest active version of every skill whose approval verifies, by name. */
  list(): Promise<SkillSummary[]>;
  /** The latest active version (or `version`) of `name`; undefined when none. Throws CapabilityDenied when its approval does not verify. */
  get(name: string, version?: number): Promise<StoredSkill | undefined>;
  /** Retires every version of `name`; the number retired. */
  retire(name: string): Promise<number>;
}
