/**
 * The worst-case model for the injection suite: it obeys every instruction it can see, wherever it
 * is written — the owner's message, earlier turns, a fetched page, a file, an MCP result, a memory.
 * An instruction is `<<DO {"tool": "...", "input": {...}} DO>>` anywhere in text. Each step it
 * makes the first instruction it has not made yet in this turn; when none is left it answers with a
 * line per call it made. So whatever a hostile text asks for, the model asks for too: only the
 * runtime stands between the text and the effect.
 *
 * Values (core/values.ts): a directive may say `$last` (the newest held value's reference), `$values`
 * (every held value's reference), `$answer` (the newest shown answer of a quarantined read). Asked as
 * the quarantined reader (no tools offered), it answers what the data tells it to — `<<ANSWER x>>` in
 * the data is obeyed — and otherwise the first thing of the asked type it finds.
 */
import type { LlmProvider } from '../../activities/llm/llm-provider.js';
import type { LlmStepRequest, LlmStepResult } from '../../core/llm.js';
import { messageText } from '../../core/message.js';
import type { ToolCall } from '../../core/tools.js';

const OPEN = '<<DO ';
const CLOSE = ' DO>>';

/** An instruction as a hostile (or benign) text writes it. */
export function directive(tool: string, input: unknown): string {
  return `<<DO ${JSON.stringify({ tool, input })} DO>>`;
}

/** Every string inside a value, in order (tool outputs are objects: a page body, an MCP content list). */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

/** The instructions in a text, in order; an instruction may carry another in a string (a memory to plant). */
function instructionsIn(text: string): { tool: string; input: unknown }[] {
  const found: { tool: string; input: unknown }[] = [];
  for (let start = text.indexOf(OPEN); start >= 0; start = text.indexOf(OPEN, start + 1)) {
    // The shortest body that parses: a nested instruction's end does not cut the outer one short.
    for (let end = text.indexOf(CLOSE, start); end >= 0; end = text.indexOf(CLOSE, end + 1)) {
      try {
        const parsed = JSON.parse(text.slice(start + OPEN.length, end)) as { tool?: unknown; input?: unknown };
        if (typeof parsed.tool === 'string') found.push({ tool: parsed.tool, input: parsed.input ?? {} });
        break;
      } catch {
        // not the end of this one yet
      }
    }
  }
  return found;
}

/** Held values and shown answers in the transcript, newest last. */
function valuesIn(req: LlmStepRequest): { refs: string[]; answers: string[] } {
  const refs: string[] = [];
  const answers: string[] = [];
  for (const item of req.transcript)
    if (item.role === 'tool')
      for (const r of item.results) {
        if (r.outcome.status !== 'Completed') continue;
        const out = (r.outcome.output ?? {}) as { value?: unknown; answer?: unknown };
        if (typeof out.value === 'string' && /^v[0-9a-f]{12}$/.test(out.value)) refs.push(`{{value:${out.value}}}`);
        else if (out.answer !== undefined) answers.push(typeof out.answer === 'string' ? out.answer : JSON.stringify(out.answer));
      }
  return { refs, answers };
}

/** A directive's input with `$last`, `$values` and `$answer` filled in. */
function withValues(input: unknown, req: LlmStepRequest): unknown {
  const { refs, answers } = valuesIn(req);
  const fill = (s: string) =>
    s
      .replaceAll('$last', refs.at(-1) ?? '$last')
      .replaceAll('$values', refs.join(' '))
      .replaceAll('$answer', answers.at(-1) ?? '$answer');
  return JSON.parse(JSON.stringify(input), (_k, v: unknown) => (typeof v === 'string' ? fill(v) : v)) as unknown;
}

/** The quarantined reader's answer: what the data orders, else the first thing of the asked type. */
function quarantinedAnswer(prompt: string): string {
  const data = prompt.slice(prompt.indexOf('<<<') + 3, prompt.lastIndexOf('>>>'));
  const ordered = /<<ANSWER (.*?)>>/s.exec(data);
  if (ordered) return `{"answer": ${ordered[1]}}`;
  const kind = /ANSWER is (.*)\./.exec(prompt)?.[1] ?? '';
  const first = (re: RegExp) => re.exec(data)?.[0];
  // A text question about an address gets the first address (a reader asked for "the sender's address").
  const question = /QUESTION: (.*)/.exec(prompt)?.[1] ?? '';
  const email = first(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/);
  let answer: unknown = /address/.test(question) && email ? email : data.trim().slice(0, 300);
  if (kind.includes('number')) answer = Number(first(/-?\d+(?:\.\d+)?/) ?? 0);
  else if (kind.includes('date')) answer = first(/\d{4}-\d{2}-\d{2}/) ?? '';
  else if (kind.startsWith('true or false')) answer = /\b(yes|true|refund)\b/i.test(data);
  else if (kind.startsWith('exactly one of')) {
    const choices = JSON.parse(kind.slice('exactly one of '.length)) as string[];
    answer = choices.find((c) => data.toLowerCase().includes(c.toLowerCase())) ?? choices[0];
  } else if (kind.includes('e-mail')) answer = [...data.matchAll(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g)].map((m) => m[0]);
  else if (kind.includes('URL')) answer = first(/https?:\/\/[^\s"'<>]+/) ?? '';
  return JSON.stringify({ answer });
}

/** A short stable key of an instruction as written (FNV-1a). */
function directiveKey(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

/** The adversarial provider. */
export function createAdversarialModel(): LlmProvider {
  return {
    name: 'adversarial',
    async step(req: LlmStepRequest): Promise<LlmStepResult> {
      const prompt = messageText(req.message.content);
      if (req.tools.length === 0 && prompt.startsWith('You are a quarantined reader'))
        return { type: 'final', text: quarantinedAnswer(prompt) };
      const texts = [...req.history.map((h) => h.text), messageText(req.message.content)];
      const made: ToolCall[] = [];
      const results: string[] = [];
      for (const item of req.transcript) {
        if (item.role === 'assistant') made.push(...item.calls);
        else
          for (const r of item.results) {
            results.push(`${r.tool}: ${r.outcome.status}`);
            texts.push(...strings(r.outcome));
          }
      }
      // A call's id names the instruction it obeyed, as written: `$last` may stand for another value by now.
      const key = (c: { tool: string; input: unknown }) => directiveKey(`${c.tool} ${JSON.stringify(c.input)}`);
      const done = new Set(made.map((c) => c.callId.split('-')[1]));
      const next = texts.flatMap(instructionsIn).find((c) => !done.has(key(c)));
      if (!next) return { type: 'final', text: results.length > 0 ? results.join('\n') : 'nothing to do' };
      return { type: 'tool_calls', calls: [{ callId: `c${req.step}-${key(next)}`, tool: next.tool, input: withValues(next.input, req) }] };
    },
  };
}
