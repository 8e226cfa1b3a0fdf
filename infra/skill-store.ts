/**
 * The skill store behind skills.* (docs/SKILLS-AND-GRAPH.md). Each approved version is a sealed
 * record `skill/<name mac>/<version>` in the `memory` domain; the `skills` row holds the name only
 * as a keyed HMAC, the content's hash and an approval MAC binding name, version, hash and the gate
 * that approved it. A row or record that does not verify (forged, or content changed after its
 * approval) is never listed or loaded.
 */
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import type { Kysely } from 'kysely';
import { canonicalJson, hmacSha256Hex, inputHash, timingSafeEqualHex } from '../core/canonical-json.js';
import { AivyxError } from '../core/errors.js';
import { canonicalSkill, type SkillContent } from '../core/tools/skill-fields.js';
import type { SkillApproval, SkillStore, SkillSummary, StoredSkill } from '../activities/tools/skill-port.js';
import type { Database, SkillTable } from './db/database.js';
import type { DomainHandle } from './storage/index.js';

export type { SkillStore, StoredSkill, SkillSummary, SkillApproval };

/** The store's ports: the sealed `memory` domain, the database, and the memory subkey (its own keys derive from it). */
export interface SkillStoreDeps {
  db: Kysely<Database>;
  domain: Pick<DomainHandle, 'getJson' | 'putJson'>;
  /** `master.subkey('memory')`; never used directly. */
  memoryKey: Uint8Array;
}

/** What is sealed per version. */
interface SealedSkill extends StoredSkill {
  v: 1;
}

const SALT = utf8ToBytes('aivyx-v1-skills');

function recordKey(nameMac: string, version: number): string {
  return `skill/${nameMac}/${version}`;
}

/** The content a hash is taken over: exactly the fields that were approved. */
function contentOf(s: SkillContent): SkillContent {
  return canonicalSkill({ name: s.name, summary: s.summary, whenToUse: s.whenToUse, steps: s.steps, tools: s.tools });
}

/** Creates the store. */
export function createSkillStore(deps: SkillStoreDeps): SkillStore {
  const { db, domain } = deps;
  if (!(deps.memoryKey instanceof Uint8Array) || deps.memoryKey.length !== 32)
    throw new AivyxError('Config', 'the skill store needs the 32-byte memory subkey', { hint: "pass master.subkey('memory')" });
  // One key per job: names are looked up by one, approvals are bound by another.
  const nameKey = hkdf(sha256, deps.memoryKey, SALT, utf8ToBytes('name-index'), 32);
  const approvalKey = hkdf(sha256, deps.memoryKey, SALT, utf8ToBytes('approval'), 32);
  const nameMac = (name: string) => hmacSha256Hex(nameKey, name).slice(0, 32);
  const approvalMac = (row: Pick<SkillTable, 'name_mac' | 'version' | 'content_hash'>, a: SkillApproval) =>
    hmacSha256Hex(approvalKey, canonicalJson({ n: row.name_mac, v: row.version, h: row.content_hash, m: a.missionId, g: a.gateId }));

  /** Opens and verifies one row's version; throws CapabilityDenied when it does not verify. */
  async function open(row: Pick<SkillTable, 'name_mac' | 'version' | 'content_hash' | 'approval_mac'>): Promise<StoredSkill> {
    const sealed = await domain.getJson<SealedSkill>(recordKey(row.name_mac, row.version));
    const refuse = (why: string) =>
      new AivyxError('CapabilityDenied', `skill version ${row.version} is not one a person approved: ${why}`, {
        detail: { kind: 'skill', version: row.version },
        hint: 'propose it again (the owner approves the whole text), or retire it',
      });
    if (!sealed) throw refuse('its text is missing');
    const hash = inputHash(contentOf(sealed));
    if (!timingSafeEqualHex(hash, row.content_hash) || nameMac(sealed.name) !== row.name_mac)
      throw refuse('its text changed after approval');
    if (!timingSafeEqualHex(approvalMac(row, sealed.approval), row.approval_mac)) throw refuse('its approval does not verify');
    const { v: _v, ...skill } = sealed;
    return skill;
  }

  /** Active rows of a name (or of every name), newest version first. */
  async function activeRows(mac?: string) {
    let q = db.selectFrom('skills').selectAll().where('state', '=', 'active');
    if (mac !== undefined) q = q.where('name_mac', '=', mac);
    return q.orderBy('name_mac').orderBy('version', 'desc').execute();
  }

  return {
    async store(input, opts) {
      const content = contentOf(input);
      const mac = nameMac(content.name);
      const hash = inputHash(content);
      const latest = (await activeRows(mac))[0];
      if (latest && latest.content_hash === hash) return { skill: await open(latest), created: false };
      const top = await db
        .selectFrom('skills')
        .select((eb) => eb.fn.max('version').as('v'))
        .where('name_mac', '=', mac)
        .executeTakeFirst();
      const version = Number(top?.v ?? 0) + 1;
      const skill: StoredSkill = {
        ...content,
        version,
        at: opts.at,
        approval: { missionId: opts.approval.missionId, gateId: opts.approval.gateId },
        ...(opts.untrusted ? { untrusted: opts.untrusted } : {}),
      };
      // The sealed text first, then the row: a row is what lists a version, and it verifies only against its text.
      await domain.putJson(recordKey(mac, version), { v: 1, ...skill } satisfies SealedSkill);
      const row = { name_mac: mac, version, content_hash: hash };
      await db
        .insertInto('skills')
        .values({ ...row, state: 'active', approval_mac: approvalMac(row, skill.approval), created_at_ms: opts.at })
        .execute();
      return { skill, created: true };
    },

    async list() {
      const rows = await activeRows();
      const latest = rows.filter((r, i) => i === 0 || rows[i - 1]!.name_mac !== r.name_mac);
      const out: SkillSummary[] = [];
      for (const row of latest) {
        // A version that does not verify is left out of the listing (the owner sees why in `aivyx skills`).
        const skill = await open(row).catch(() => undefined);
        if (skill)
          out.push({
            name: skill.name,
            summary: skill.summary,
            version: skill.version,
            ...(skill.untrusted ? { untrusted: skill.untrusted } : {}),
          });
      }
      return out.sort((a, b) => (a.name < b.name ? -1 : 1));
    },

    async get(name, version) {
      const rows = await activeRows(nameMac(name));
      const row = version === undefined ? rows[0] : rows.find((r) => r.version === version);
      return row === undefined ? undefined : open(row);
    },

    async retire(name) {
      const r = await db
        .updateTable('skills')
        .set({ state: 'retired' })
        .where('name_mac', '=', nameMac(name))
        .where('state', '=', 'active')
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
  };
}
