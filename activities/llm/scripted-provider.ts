/**
 * A deterministic LLM provider driven by a JSON script (docs/SCRIPTED-LLM.md): for tests and the
 * offline demo. It keeps no state between steps, so any worker answers any step the same way.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { AivyxError, describeError } from '../../core/errors.js';
import type { LlmStepRequest, LlmStepResult } from '../../core/llm.js';
import { messageText } from '../../core/message.js';
import type { ToolCall, ToolResult } from '../../core/tools.js';
import type { LlmProvider, LlmStepSink } from './llm-provider.js';
import { TEMPLATE, validateScript, type ScriptedRule, type ScriptedScript, type ScriptedStep } from './scripted-script.js';

export {
  validateScript,
  type ScriptedScript,
  type ScriptedRule,
  type ScriptedStep,
  type ScriptedSayStep,
  type ScriptedCallStep,
  type ScriptedCall,
  type ScriptedFailStep,
} from './scripted-script.js';

/** Final text when `req.step` is past the matching rule's last step. */
export const SCRIPT_EXHAUSTED = '(script exhausted)';
/** Final text when no rule matches (a script without a catch-all rule). */
export const SCRIPT_NO_MATCH = '(no rule matched)';
/** Longest single sleep between heartbeats while a step waits. */
const HEARTBEAT_EVERY_MS = 1_000;
/** Words per streamed piece when a step does not say `chunks`. */
const WORDS_PER_CHUNK = 3;

interface CompiledRule {
  rule: ScriptedRule;
  pattern: RegExp | undefined;
}

/** What templates can see for one step. */
interface TemplateScope {
  message: string;
  step: number;
  match: RegExpExecArray | undefined;
  results: ToolResult[];
  /** The message's `receivedAt` (epoch ms): dates come from it, never the clock, so a retried step answers the same. */
  receivedAt: number;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function compile(rule: ScriptedRule): CompiledRule {
  if (rule.regex !== undefined) return { rule, pattern: new RegExp(rule.regex, 'iu') };
  if (rule.match !== undefined) return { rule, pattern: new RegExp(escapeRegex(rule.match), 'iu') };
  return { rule, pattern: undefined };
}

/** Tool results of the previous step: the last `tool` item of the transcript. */
function lastResults(req: LlmStepRequest): ToolResult[] {
  for (let i = req.transcript.length - 1; i >= 0; i--) {
    const item = req.transcript[i];
    if (item?.role === 'tool') return item.results;
  }
  return [];
}

function render(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/** `{{results}}`: every result of the previous step on one line. */
function summarizeResults(results: readonly ToolResult[]): string {
  if (results.length === 0) return '(no tool results)';
  return results
    .map((r) => {
      const o = r.outcome;
      switch (o.status) {
        case 'Completed':
          return `${r.tool}: Completed (${o.verified})`;
        case 'Denied':
          return `${r.tool}: Denied (needs ${o.scope})`;
        case 'RequiresEscalation':
          return `${r.tool}: RequiresEscalation (${oneLine(o.reason)})`;
        case 'Failed':
          return `${r.tool}: Failed (${oneLine(describeError(o.error))})`;
      }
    })
    .join('; ');
}

function lookup(root: unknown, path: readonly string[]): unknown {
  let cur = root;
  for (const seg of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

const DAY_MS = 86_400_000;

/** `date.*`: the UTC day of `receivedAt`; `start` is inclusive, `end` (the next midnight) exclusive. */
function dateVariable(rest: readonly string[], receivedAt: number): unknown {
  const [which, edge, unit] = rest;
  if (which === 'now') return edge === 'ms' ? receivedAt : new Date(receivedAt).toISOString();
  const start = Math.floor(receivedAt / DAY_MS) * DAY_MS - (which === 'yesterday' ? DAY_MS : 0);
  if (edge === undefined) return new Date(start).toISOString().slice(0, 10);
  const at = edge === 'end' ? start + DAY_MS : start;
  return unit === 'ms' ? at : new Date(at).toISOString();
}

function variable(name: string, scope: TemplateScope): unknown {
  const [root, ...rest] = name.split('.');
  switch (root) {
    case 'message':
      return scope.message;
    case 'step':
      return scope.step;
    case 'date':
      return dateVariable(rest, scope.receivedAt);
    case 'results':
      return summarizeResults(scope.results);
    case 'match': {
      const key = rest[0] ?? '0';
      return /^\d+$/.test(key) ? scope.match?.[Number(key)] : scope.match?.groups?.[key];
    }
    case 'result': {
      const r = scope.results[Number(rest[0])];
      // The outcome's fields sit beside tool/callId: result.0.status, result.0.output.x, result.0.error.message.
      return r === undefined ? undefined : lookup({ tool: r.tool, callId: r.callId, ...r.outcome }, rest.slice(1));
    }
    default:
      return undefined;
  }
}

function fill(text: string, scope: TemplateScope): string {
  return text.replace(TEMPLATE, (_, name: string) => render(variable(name, scope)));
}

/** Templates every string leaf of a call input; `{"$split": "..."}` becomes the words of its text, `{"$number": "..."}` a number. */
function fillInput(value: unknown, scope: TemplateScope): unknown {
  if (typeof value === 'string') return fill(value, scope);
  if (Array.isArray(value)) return value.map((v) => fillInput(v, scope));
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  if (typeof obj.$split === 'string') return fill(obj.$split, scope).split(/\s+/).filter(Boolean);
  if (typeof obj.$number === 'string') {
    const text = fill(obj.$number, scope).trim();
    const n = Number(text);
    if (text === '' || !Number.isFinite(n))
      throw new AivyxError('Llm', `scripted: {"$number": …} filled to ${JSON.stringify(text)}, not a number`, {
        detail: { provider: 'scripted' },
      });
    return n;
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, fillInput(v, scope)]));
}

/** Pieces of `text` to stream: exactly `chunks` pieces by characters, or a few words each. */
export function splitForStreaming(text: string, chunks?: number): string[] {
  if (text === '') return [];
  if (chunks !== undefined) {
    const chars = Array.from(text);
    const n = Math.min(chunks, chars.length);
    const out: string[] = [];
    for (let i = 0; i < n; i++)
      out.push(chars.slice(Math.floor((i * chars.length) / n), Math.floor(((i + 1) * chars.length) / n)).join(''));
    return out;
  }
  // Split before each word that follows whitespace, so the pieces concatenate back exactly.
  const words = text.split(/(?<=\s)(?=\S)/);
  const out: string[] = [];
  for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) out.push(words.slice(i, i + WORDS_PER_CHUNK).join(''));
  return out;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new AivyxError('Cancelled', 'the LLM step was cancelled');
}

/** Sleeps `ms`, heartbeating at least every second; rejects with the abort reason as soon as aborted. */
async function pause(ms: number, sink: LlmStepSink): Promise<void> {
  let left = ms;
  while (left > 0) {
    if (sink.signal.aborted) throw abortReason(sink.signal);
    const slice = Math.min(left, HEARTBEAT_EVERY_MS);
    await new Promise<void>((done, fail) => {
      const onAbort = () => {
        clearTimeout(timer);
        fail(abortReason(sink.signal));
      };
      const timer = setTimeout(() => {
        sink.signal.removeEventListener('abort', onAbort);
        done();
      }, slice);
      sink.signal.addEventListener('abort', onAbort, { once: true });
    });
    left -= slice;
    sink.heartbeat();
  }
}

async function stream(text: string, step: { chunks?: number; chunkDelayMs?: number }, sink: LlmStepSink): Promise<void> {
  const pieces = splitForStreaming(text, step.chunks);
  for (const [i, piece] of pieces.entries()) {
    if (sink.signal.aborted) throw abortReason(sink.signal);
    if (i > 0 && step.chunkDelayMs) await pause(step.chunkDelayMs, sink);
    sink.text(piece);
  }
}

async function say(text: string, sink: LlmStepSink): Promise<LlmStepResult> {
  await stream(text, {}, sink);
  return { type: 'final', text };
}

/** About four characters a token: what a scripted step reports when it does not declare its usage. */
const CHARS_PER_TOKEN = 4;

/** What the model reads in a step: the history, the message and the turn so far (the tools' descriptions are not counted). */
function charsRead(req: LlmStepRequest): number {
  const history = req.history.reduce((n, h) => n + h.text.length, 0);
  return history + messageText(req.message.content).length + (req.transcript.length > 0 ? JSON.stringify(req.transcript).length : 0);
}

/** The step's declared usage, or the estimate from characters read and written (deterministic: same request, same count). */
function usageOf(step: ScriptedStep, req: LlmStepRequest, result: LlmStepResult): LlmStepResult {
  if ('fail' in step) return result;
  const written = (result.text ?? '').length + (result.type === 'tool_calls' ? JSON.stringify(result.calls).length : 0);
  const usage = step.usage ?? {
    inputTokens: Math.ceil(charsRead(req) / CHARS_PER_TOKEN),
    outputTokens: Math.ceil(written / CHARS_PER_TOKEN),
  };
  return { ...result, usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } };
}

async function runStep(step: ScriptedStep, scope: TemplateScope, rule: ScriptedRule, sink: LlmStepSink): Promise<LlmStepResult> {
  if (step.delayMs) await pause(step.delayMs, sink);
  if (sink.signal.aborted) throw abortReason(sink.signal);
  if ('fail' in step) {
    throw new AivyxError('Llm', fill(step.fail, scope), { detail: { provider: 'scripted', rule: rule.name ?? null, step: scope.step } });
  }
  if ('call' in step) {
    const calls: ToolCall[] = step.call.map((c, i) => ({
      callId: `s${scope.step}c${i}`,
      tool: c.tool,
      input: fillInput(c.input ?? {}, scope),
    }));
    if (step.say === undefined) return { type: 'tool_calls', calls };
    const text = fill(step.say, scope);
    await stream(text, step, sink);
    return { type: 'tool_calls', text, calls };
  }
  const failed = step.sayOnFailure !== undefined && scope.results.some((r) => r.outcome.status !== 'Completed');
  const text = fill(failed ? (step.sayOnFailure as string) : step.say, scope);
  await stream(text, step, sink);
  return { type: 'final', text };
}

/** A provider over an in-memory script (validated first: throws AivyxError('Config')). */
export function createScriptedProvider(script: ScriptedScript, source = '<inline script>'): LlmProvider {
  const rules = validateScript(script, source).rules.map(compile);
  return {
    name: 'scripted',
    async step(req, sink) {
      const message = messageText(req.message.content);
      for (const { rule, pattern } of rules) {
        const match = pattern === undefined ? undefined : pattern.exec(message);
        if (pattern !== undefined && match === null) continue;
        const step = rule.steps[req.step];
        if (step === undefined) return say(SCRIPT_EXHAUSTED, sink);
        const result = await runStep(
          step,
          { message, step: req.step, match: match ?? undefined, results: lastResults(req), receivedAt: req.message.receivedAt },
          rule,
          sink,
        );
        return usageOf(step, req, result);
      }
      return say(SCRIPT_NO_MATCH, sink);
    },
  };
}

/** Reads, parses and validates a script file: `spec` is `scripted:<file>` or a plain path. */
export async function loadScriptedProvider(spec: string): Promise<LlmProvider> {
  const file = spec.startsWith('scripted:') ? spec.slice('scripted:'.length) : spec;
  if (file === '')
    throw new AivyxError('Config', 'the scripted LLM needs a file: scripted:<path>', {
      hint: 'e.g. AIVYX_LLM=scripted:docs/examples/demo-script.json',
    });
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new AivyxError('Config', `cannot read the LLM script ${path}: ${(e as Error).message}`, {
      hint: 'check AIVYX_LLM=scripted:<path>',
      detail: { file: path },
      cause: e,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AivyxError('Config', `${path}: invalid JSON: ${(e as Error).message}`, {
      hint: 'see docs/SCRIPTED-LLM.md for the script format',
      detail: { file: path, path: '$' },
      cause: e,
    });
  }
  return createScriptedProvider(json as ScriptedScript, path);
}
