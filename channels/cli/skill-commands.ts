/**
 * `aivyx skills list|show|retire` and `aivyx graph predicates [add P]`: what the assistant has
 * learned, for the owner, through the running `aivyx up`'s REST channel (scope-checked like the
 * tools). A new or edited skill is proposed in a conversation and approved at its gate, never here.
 */
import { parseArgs } from 'node:util';
import type { SkillSummary, StoredSkill } from '../../activities/tools/skill-port.js';
import { AivyxError } from '../../core/errors.js';
import { restJson, type RestTarget } from './rest-client.js';

export const SKILLS_USAGE = `usage:
  aivyx skills list [--json]                    the approved skills: name, version, summary (and where a proposal's content came from)
  aivyx skills show NAME [--version N] [--json] one skill whole: when to use it, its steps, the tools it expects, who approved it
  aivyx skills retire NAME                      stop offering a skill (every version)
  (a new skill, or a new version of one, is proposed in a conversation and approved at its gate)`;

export const GRAPH_USAGE = `usage:
  aivyx graph predicates [--json]               the predicate vocabulary of the knowledge graph
  aivyx graph predicates add PREDICATE          add one (lower-case snake_case, e.g. mentors)`;

const from = (untrusted: string | undefined) => (untrusted ? `  (proposed after untrusted content: ${untrusted})` : '');

/** Runs `aivyx skills …`. */
export async function runSkillsCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, version: { type: 'string' } },
  });
  const name = (): string => {
    if (positionals.length !== 1) throw new AivyxError('Config', `skills ${sub} needs exactly one skill name`, { hint: SKILLS_USAGE });
    return encodeURIComponent(positionals[0]!);
  };
  switch (sub) {
    case 'list': {
      const { skills } = (await restJson(target, 'GET', '/v1/skills')) as { skills: SkillSummary[] };
      if (values.json) out(`${JSON.stringify({ skills })}\n`);
      else if (skills.length === 0) out('no approved skills\n');
      else out(`${skills.map((s) => `${s.name} v${s.version}  ${s.summary}${from(s.untrusted)}`).join('\n')}\n`);
      return 0;
    }
    case 'show': {
      const v = values.version === undefined ? '' : `?version=${encodeURIComponent(values.version)}`;
      const s = (await restJson(target, 'GET', `/v1/skills/${name()}${v}`)) as StoredSkill;
      if (values.json) {
        out(`${JSON.stringify(s)}\n`);
        return 0;
      }
      out(
        [
          `${s.name} v${s.version}  ${s.summary}${from(s.untrusted)}`,
          `when to use: ${s.whenToUse}`,
          ...s.steps.map((step, i) => `  ${i + 1}. ${step}`),
          `tools it expects (it grants none): ${s.tools.join(' ') || 'none'}`,
          `approved at gate ${s.approval.gateId}, ${new Date(s.at).toISOString()}`,
          '',
        ].join('\n'),
      );
      return 0;
    }
    case 'retire': {
      const r = (await restJson(target, 'POST', `/v1/skills/${name()}/retire`)) as { retired: number };
      out(r.retired === 0 ? 'nothing retired (no such active skill)\n' : `retired (${r.retired} version${r.retired === 1 ? '' : 's'})\n`);
      return 0;
    }
    default:
      throw new AivyxError('Config', `unknown skills command "${sub ?? ''}"`, { hint: SKILLS_USAGE });
  }
}

/** Runs `aivyx graph …`. */
export async function runGraphCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const [sub, action, predicate, ...extra] = args;
  if (sub !== 'predicates' || (action !== undefined && action !== 'add' && action !== '--json') || extra.length > 0)
    throw new AivyxError('Config', `unknown graph command "${args.join(' ')}"`, { hint: GRAPH_USAGE });
  if (action === 'add') {
    if (predicate === undefined) throw new AivyxError('Config', 'graph predicates add needs a predicate', { hint: GRAPH_USAGE });
    await restJson(target, 'POST', '/v1/graph/predicates', { predicate });
    out(`added ${predicate}\n`);
    return 0;
  }
  const { predicates } = (await restJson(target, 'GET', '/v1/graph/predicates')) as { predicates: string[] };
  out(action === '--json' ? `${JSON.stringify({ predicates })}\n` : `${predicates.join('\n')}\n`);
  return 0;
}
