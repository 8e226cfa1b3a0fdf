/**
 * The scripted-LLM script format (docs/SCRIPTED-LLM.md): types plus a validator whose errors
 * name the file and the JSON path of the problem, so a typo in a test script is found at load.
 */
import { AivyxError } from '../../core/errors.js';

/** A script: rules tried in order against the user's message text. */
export interface ScriptedScript {
  description?: string;
  /** Format version; only 1 exists. */
  version?: 1;
  rules: ScriptedRule[];
}

/** One rule: a matcher (none = catch-all) and the steps of the turn, indexed by `req.step`. */
export interface ScriptedRule {
  /** Shown in errors and `Llm` failures. */
  name?: string;
  /** Case-insensitive substring of the message text. */
  match?: string;
  /** Case-insensitive (Unicode) regular expression; capture groups are `{{match.N}}` / `{{match.name}}`. */
  regex?: string;
  steps: ScriptedStep[];
}

/** One model step: say a final text, call tools, or fail. */
export type ScriptedStep = ScriptedSayStep | ScriptedCallStep | ScriptedFailStep;

/** Tokens a step says it used (instead of the estimate: a quarter of the characters read and written). */
export interface ScriptedUsage {
  inputTokens: number;
  outputTokens: number;
}

/** Ends the turn with `say` (templated), streamed in pieces. */
export interface ScriptedSayStep {
  usage?: ScriptedUsage;
  say: string;
  /** Said instead of `say` when a tool result of the previous step is not Completed (denied, failed, escalated). */
  sayOnFailure?: string;
  /** Stream in exactly this many pieces (default: a few words per piece). */
  chunks?: number;
  /** Pause between pieces (heartbeating, abortable). */
  chunkDelayMs?: number;
  /** Think this long before answering (heartbeating, abortable). */
  delayMs?: number;
}

/** Requests a batch of tool calls (run in parallel); `say` is optional text shown alongside. */
export interface ScriptedCallStep {
  call: ScriptedCall[];
  usage?: ScriptedUsage;
  say?: string;
  chunks?: number;
  chunkDelayMs?: number;
  delayMs?: number;
}

/** One tool call; string leaves of `input` are templated, `{"$split": "..."}` becomes a word array, `{"$number": "..."}` a number. */
export interface ScriptedCall {
  tool: string;
  input?: unknown;
}

/** Throws AivyxError('Llm', fail): exercises provider-failure paths. */
export interface ScriptedFailStep {
  fail: string;
  delayMs?: number;
}

/** Template variables a script may use; anything else is a load-time error. */
const TEMPLATE_VAR =
  /^(message|results|step|match\.[A-Za-z0-9_]+|result\.\d+(\.[A-Za-z0-9_$-]+)*|date\.now(\.ms)?|date\.(today|yesterday)(\.(start|end)(\.ms)?)?)$/;
/** `{{ name }}` with optional inner spaces. */
export const TEMPLATE = /\{\{\s*([^{}]*?)\s*\}\}/g;

type Problem = (path: string, message: string) => AivyxError;

function problemFor(source: string): Problem {
  return (path, message) =>
    new AivyxError('Config', `${source}: ${path}: ${message}`, {
      hint: 'see docs/SCRIPTED-LLM.md for the script format',
      detail: { file: source, path },
    });
}

function key(path: string, k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function onlyKeys(p: Problem, path: string, obj: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(obj)) if (!allowed.includes(k)) throw p(key(path, k), `unknown key (allowed: ${allowed.join(', ')})`);
}

function checkTemplate(p: Problem, path: string, text: unknown): void {
  if (typeof text !== 'string') throw p(path, 'must be a string');
  for (const m of text.matchAll(TEMPLATE)) {
    if (!TEMPLATE_VAR.test(m[1] as string))
      throw p(
        path,
        `unknown template variable {{${m[1]}}} (use message, step, results, match.N, result.N.<path>, date.now, date.today[.start|.end], date.yesterday[.start|.end], .ms)`,
      );
  }
}

function checkInt(p: Problem, path: string, v: unknown, min: number): void {
  if (v !== undefined && (typeof v !== 'number' || !Number.isInteger(v) || v < min)) throw p(path, `must be an integer ≥ ${min}`);
}

/** Checks templates in a call input: every string leaf, and `{"$split": string}` nodes. */
function checkInput(p: Problem, path: string, v: unknown): void {
  if (typeof v === 'string') return checkTemplate(p, path, v);
  if (Array.isArray(v)) return v.forEach((x, i) => checkInput(p, `${path}[${i}]`, x));
  if (!isObject(v)) return;
  if ('$split' in v) {
    onlyKeys(p, path, v, ['$split']);
    return checkTemplate(p, key(path, '$split'), v.$split);
  }
  if ('$number' in v) {
    onlyKeys(p, path, v, ['$number']);
    return checkTemplate(p, key(path, '$number'), v.$number);
  }
  for (const [k, x] of Object.entries(v)) checkInput(p, key(path, k), x);
}

function checkStep(p: Problem, path: string, step: unknown): void {
  if (!isObject(step)) throw p(path, 'a step must be an object with "say", "call" or "fail"');
  checkInt(p, `${path}.delayMs`, step.delayMs, 0);
  if ('fail' in step) {
    onlyKeys(p, path, step, ['fail', 'delayMs']);
    checkTemplate(p, `${path}.fail`, step.fail);
    return;
  }
  if ('call' in step) {
    onlyKeys(p, path, step, ['call', 'say', 'chunks', 'chunkDelayMs', 'delayMs', 'usage']);
    if (!Array.isArray(step.call) || step.call.length === 0) throw p(`${path}.call`, 'must be a non-empty array of {"tool", "input"}');
    step.call.forEach((c: unknown, i) => {
      const cp = `${path}.call[${i}]`;
      if (!isObject(c)) throw p(cp, 'must be an object {"tool", "input"}');
      onlyKeys(p, cp, c, ['tool', 'input']);
      if (typeof c.tool !== 'string' || c.tool === '') throw p(`${cp}.tool`, 'must be a non-empty string (a tool id such as "fs.read")');
      checkInput(p, `${cp}.input`, c.input);
    });
    if (step.say !== undefined) checkTemplate(p, `${path}.say`, step.say);
  } else if ('say' in step) {
    onlyKeys(p, path, step, ['say', 'sayOnFailure', 'chunks', 'chunkDelayMs', 'delayMs', 'usage']);
    checkTemplate(p, `${path}.say`, step.say);
    if (step.sayOnFailure !== undefined) checkTemplate(p, `${path}.sayOnFailure`, step.sayOnFailure);
  } else {
    throw p(path, 'a step needs "say", "call" or "fail"');
  }
  if (step.usage !== undefined) {
    if (!isObject(step.usage)) throw p(`${path}.usage`, 'must be an object {"inputTokens", "outputTokens"}');
    onlyKeys(p, `${path}.usage`, step.usage, ['inputTokens', 'outputTokens']);
    for (const k of ['inputTokens', 'outputTokens']) {
      if (step.usage[k] === undefined) throw p(`${path}.usage.${k}`, 'is required');
      checkInt(p, `${path}.usage.${k}`, step.usage[k], 0);
    }
  }
  checkInt(p, `${path}.chunks`, step.chunks, 1);
  checkInt(p, `${path}.chunkDelayMs`, step.chunkDelayMs, 0);
}

function checkRule(p: Problem, path: string, rule: unknown): void {
  if (!isObject(rule)) throw p(path, 'a rule must be an object with "steps"');
  onlyKeys(p, path, rule, ['name', 'match', 'regex', 'steps']);
  if (rule.name !== undefined && typeof rule.name !== 'string') throw p(`${path}.name`, 'must be a string');
  if (rule.match !== undefined && rule.regex !== undefined) throw p(path, 'give "match" or "regex", not both');
  if (rule.match !== undefined && (typeof rule.match !== 'string' || rule.match === ''))
    throw p(`${path}.match`, 'must be a non-empty string');
  if (rule.regex !== undefined) {
    if (typeof rule.regex !== 'string') throw p(`${path}.regex`, 'must be a string');
    try {
      new RegExp(rule.regex, 'iu');
    } catch (e) {
      throw p(`${path}.regex`, `invalid regular expression: ${(e as Error).message}`);
    }
  }
  if (!Array.isArray(rule.steps) || rule.steps.length === 0) throw p(`${path}.steps`, 'must be a non-empty array');
  rule.steps.forEach((s: unknown, i) => checkStep(p, `${path}.steps[${i}]`, s));
}

/** Validates a parsed script; `source` (a file name) prefixes every error. Throws AivyxError('Config'). */
export function validateScript(value: unknown, source = '<script>'): ScriptedScript {
  const p = problemFor(source);
  if (!isObject(value)) throw p('$', 'a script must be an object {"rules": [...]}');
  onlyKeys(p, '$', value, ['description', 'version', 'rules']);
  if (value.description !== undefined && typeof value.description !== 'string') throw p('$.description', 'must be a string');
  if (value.version !== undefined && value.version !== 1) throw p('$.version', 'only version 1 exists');
  if (!Array.isArray(value.rules) || value.rules.length === 0) throw p('$.rules', 'must be a non-empty array of rules');
  value.rules.forEach((r: unknown, i) => checkRule(p, `$.rules[${i}]`, r));
  return value as unknown as ScriptedScript;
}
