/**
 * The SemiTrusted ▲ policy from the environment (docs/CONFIG.md, docs/TOOLS.md "Trust
 * tiers"): which folders, URLs and names an allowlisted Telegram DM or a verified e-mail may reach.
 * Unset variables take the safe defaults below; an empty value means "none" (the base is absent
 * from the SemiTrusted ceiling). Lists are comma-separated.
 */
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { validateTierPolicy, type SemiTrustedPolicyBase, type TierPolicy } from '../core/capability/tier-policy.js';
import { AivyxError } from '../core/errors.js';

/** The folder under the data directory that SemiTrusted turns may use by default (and that stays reachable to tools). */
export function workspaceDir(home: string): string {
  return join(home, 'workspace');
}

/** One variable of the policy: the ▲ bases it fills, whether its values are paths, and its default. */
interface PolicyVariable {
  name: string;
  bases: readonly SemiTrustedPolicyBase[];
  paths: boolean;
  default: (home: string) => string[];
}

/** The variables, in the order docs/CONFIG.md lists them. */
export const TIER_POLICY_VARIABLES: readonly PolicyVariable[] = Object.freeze([
  { name: 'AIVYX_SEMITRUSTED_FS', bases: ['fs.read', 'fs.write'], paths: true, default: (home) => [`${workspaceDir(home)}/**`] },
  { name: 'AIVYX_SEMITRUSTED_FS_READ', bases: ['fs.read'], paths: true, default: () => [] },
  { name: 'AIVYX_SEMITRUSTED_GIT', bases: ['git.read'], paths: true, default: (home) => [`${workspaceDir(home)}/**`] },
  { name: 'AIVYX_SEMITRUSTED_NET_POST', bases: ['net.post'], paths: false, default: () => [] },
  { name: 'AIVYX_SEMITRUSTED_CHANNEL_SEND', bases: ['channel.send'], paths: false, default: () => [] },
  { name: 'AIVYX_SEMITRUSTED_CHANNEL_RECEIVE', bases: ['channel.receive'], paths: false, default: () => [] },
  { name: 'AIVYX_SEMITRUSTED_MEMORY_FORGET', bases: ['memory.forget'], paths: false, default: () => [] },
  { name: 'AIVYX_SEMITRUSTED_MISSION_CREATE', bases: ['mission.create'], paths: false, default: () => [] },
  { name: 'AIVYX_SEMITRUSTED_MISSION_LIST', bases: ['mission.list'], paths: false, default: () => [] },
  { name: 'AIVYX_SEMITRUSTED_MISSION_CANCEL', bases: ['mission.cancel'], paths: false, default: () => [] },
]);

/**
 * `p` with the symlinks of its literal (glob-free) part resolved as far as it exists, so the
 * glob is compared with the real paths the tools check (e.g. /tmp → /private/tmp).
 */
function canonicalGlobPath(p: string): string {
  const segments = p.split('/');
  const firstGlob = segments.findIndex((s) => /[*?]/.test(s));
  const literal = (firstGlob < 0 ? segments : segments.slice(0, firstGlob)).join('/') || '/';
  const rest = firstGlob < 0 ? [] : segments.slice(firstGlob);
  let existing = literal;
  const missing: string[] = [];
  while (!existsSync(existing) && existing !== '/') {
    missing.unshift(basename(existing));
    existing = dirname(existing);
  }
  return join(realpathSync(existing), ...missing, ...rest);
}

/** Reads one path value: `~` expands to `homeDir`; anything else must be absolute. */
function pathValue(name: string, raw: string, homeDir: string): string {
  const expanded = raw === '~' ? homeDir : raw.startsWith('~/') ? join(homeDir, raw.slice(2)) : raw;
  if (!expanded.startsWith('/')) {
    throw new AivyxError('Config', `${name}: "${raw}" is not an absolute path`, {
      hint: `write full paths or ~/..., comma-separated, e.g. ${name}=~/Shared/**`,
    });
  }
  return canonicalGlobPath(expanded);
}

/**
 * Builds the tier policy from `env`: `home` is the data directory (defaults live under its
 * workspace), `homeDir` what `~` means (default `$HOME`, else the OS's). Throws
 * AivyxError('Config') naming the variable for a bad value.
 */
export function tierPolicyFromEnv(env: NodeJS.ProcessEnv, home: string, homeDir: string = env.HOME || homedir()): TierPolicy {
  const semiTrusted: Partial<Record<SemiTrustedPolicyBase, string[]>> = {};
  for (const v of TIER_POLICY_VARIABLES) {
    const raw = env[v.name];
    const values =
      raw === undefined
        ? v.default(home)
        : raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
    const qualifiers = values.map((value) => (v.paths ? pathValue(v.name, value, homeDir) : value));
    for (const base of v.bases) semiTrusted[base] = [...(semiTrusted[base] ?? []), ...qualifiers];
    try {
      validateTierPolicy({ semiTrusted: Object.fromEntries(v.bases.map((b) => [b, qualifiers])) });
    } catch (e) {
      const hint = e instanceof AivyxError ? e.hint : undefined;
      throw new AivyxError('Config', `${v.name}: ${e instanceof Error ? e.message : String(e)}`, {
        ...(hint === undefined ? {} : { hint }),
        cause: e,
      });
    }
  }
  return validateTierPolicy({ semiTrusted });
}
