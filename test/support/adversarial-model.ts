/**
 * The worst-case model for the injection suite: it obeys every instruction it can see, wherever it
 * is written — the owner's message, earlier turns, a fetched page, a file, an MCP result, a memory.
 * An instruction is `<<DO {"tool": "...", "input": {...}} DO>>` anywhere in text. Each step it
 * makes the first instruction it has not made yet in this turn; when none is left it answers with a
 * line per call it made. So whatever a hostile text asks for, the model asks for too: only the
 * runtime stands between the text and the effect.
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

/** The adversarial provider. */
export function createAdversarialModel(): LlmProvider {
  return {
    name: 'adversarial',
    async step(req: LlmStepRequest): Promise<LlmStepResult> {
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
      const key = (c: { tool: string; input: unknown }) => `${c.tool} ${JSON.stringify(c.input)}`;
      const done = new Set(made.map(key));
      const next = texts.flatMap(instructionsIn).find((c) => !done.has(key(c)));
      if (!next) return { type: 'final', text: results.length > 0 ? results.join('\n') : 'nothing to do' };
      return { type: 'tool_calls', calls: [{ callId: `c${req.step}`, tool: next.tool, input: next.input }] };
    },
  };
}
