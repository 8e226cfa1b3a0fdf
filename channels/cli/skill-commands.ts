/**
 * `aivyx skills list|show|edit|retire` and `aivyx graph predicates [add P]`: what the assistant has
 * learned, for the owner, through the running `aivyx up`'s REST channel (scope-checked like the
 * tools). An edit stores nothing here: it waits at an approval gate like a proposal, and a new skill
 * is proposed in a conversation.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { SkillSummary, StoredSkill } from '../../activities/tools/skill-port.js';
import { AivyxError } from '../../core/errors.js';
import { restJson, type RestTarget } from './rest-client.js';

export const SKILLS_USAGE = `usage:
  aivyx skills list [--json]                    the approved skills: name, version, summary (and where a proposal's content came from)
  aivyx skills show NAME [--version N] [--json] one skill whole: when to use it, its steps, the tools it expects, who approved it
  aivyx skills edit NAME [--summary S] [--when W] [--step S]... [--tool T]... [--file F.json]
                                                a new version: the parts given replace the latest version's (--step and --tool
                                                replace the whole list; --file holds {summary, whenToUse, steps, tools}); it waits
                                                for approval at a gate like a proposal (\`aivyx mission approve\`), stored only then
  aivyx skills retire NAME                      stop offering a skill (every version)
  (a new skill is proposed in a conversation and approved at its gate)`;

export const GRAPH_USAGE = `usage:
  aivyx graph predicates [--json]               the predicate vocabulary of the knowledge graph
  aivyx graph predicates add PREDICATE          add one (lower-case snake_case, e.g. mentors)`;

const from = (untrusted: string | undefined) => (untrusted ? `  (proposed after untrusted content: ${untrusted})` : '');

/** The parts of a skill an edit's `--file` replaces. */
function editFile(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new AivyxError('Config', `${path}: not a JSON file of the skill's parts (${(e as Error).message})`, { hint: SKILLS_USAGE });
  }
}

/** Runs `aivyx skills …`. */
export async function runSkillsCommand(args: string[], target: RestTarget, out: (s: string) => void): Promise<number> {
  const [sub, ...rest] = args;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      version: { type: 'string' },
      summary: { type: 'string' },
      when: { type: 'string' },
      step: { type: 'string', multiple: true },
      tool: { type: 'string', multiple: true },
      file: { type: 'string' },
    },
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
    case 'edit': {
      const fromFile = values.file ? editFile(values.file) : {};
      const changes = {
        ...fromFile,
        ...(values.summary !== undefined ? { summary: values.summary } : {}),
        ...(values.when !== undefined ? { whenToUse: values.when } : {}),
        ...(values.step ? { steps: values.step } : {}),
        ...(values.tool ? { tools: values.tool } : {}),
      };
      const r = (await restJson(target, 'POST', `/v1/skills/${name()}/edit`, changes)) as {
        version: number;
        missionId: string;
        gateId: string;
      };
      out(`v${r.version} waits for approval at gate ${r.gateId} (aivyx mission show ${r.missionId}); stored only once approved\n`);
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
