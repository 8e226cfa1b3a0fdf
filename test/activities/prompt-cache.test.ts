/**
 * The prompt a session sends turn after turn, as the providers put it on the wire (captured by a
 * local server): the system prompt and tools first and byte-identical on every turn, the history
 * after them unchanged as it grows, the turn's date and time only after the message, and the
 * Anthropic cache breakpoints on that stable prefix.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeReplayServers, fixture, replay, sink } from '../support/llm-replay.js';
import { createAnthropicProvider } from '../../activities/llm/anthropic.js';
import { createOpenAiCompatibleProvider } from '../../activities/llm/openai-compatible.js';
import { SYSTEM_PROMPT, turnContext } from '../../activities/llm/system-prompt.js';
import { offeredToolIds, wireSpec } from '../../activities/llm/step-prompt.js';
import type { HistoryEntry } from '../../core/channel.js';
import type { LlmStepRequest } from '../../core/llm.js';
import { textContent } from '../../core/message.js';
import { TOOL_CATALOG, toolSpecs } from '../../core/tool-catalog.js';

afterEach(closeReplayServers);

const tools = toolSpecs(
  offeredToolIds(
    TOOL_CATALOG.map((t) => t.id),
    ['fs.read', 'memory.read', 'mission.create'],
  ),
).map(wireSpec);
const DAY = Date.UTC(2026, 11, 5, 8, 30);

/** The request of turn `n` (0-based) of a session whose earlier turns asked `q<i>` and got `a<i>`. */
function turn(n: number): LlmStepRequest {
  const history: HistoryEntry[] = Array.from({ length: n }, (_, i) => [
    { role: 'user' as const, text: `question ${i}` },
    { role: 'assistant' as const, text: `answer ${i}` },
  ]).flat();
  const receivedAt = DAY + n * 3_600_000;
  return {
    turnId: `t${n}`,
    step: 0,
    history,
    message: { id: `m${n}`, sessionId: 's', receivedAt, content: textContent(`question ${n}`) },
    transcript: [],
    tools,
    system: SYSTEM_PROMPT,
    context: turnContext(receivedAt, 'Europe/Berlin'),
  };
}

/** A body as text with the cache marks taken out (a cached prefix is compared without them). */
const unmarked = (v: unknown): string => JSON.stringify(v, (k, x: unknown) => (k === 'cache_control' ? undefined : x));

describe('the cacheable prefix', () => {
  it('Anthropic: tools and system are byte-identical on every turn, each turn extends the last, breakpoints mark the prefix', async () => {
    const srv = await replay([{ body: fixture('anthropic-text.sse') }]);
    const llm = createAnthropicProvider({ baseUrl: srv.url, model: 'claude-sonnet-4-5', apiKey: 'k' });
    for (const n of [0, 1, 2, 3]) await llm.step(turn(n), sink());
    const bodies = srv.seen.map((s) => s.body);
    for (const b of bodies) {
      expect(JSON.stringify(b.tools)).toBe(JSON.stringify(bodies[0]?.tools));
      expect(JSON.stringify(b.system)).toBe(JSON.stringify([{ type: 'text', text: SYSTEM_PROMPT, cache_control: { type: 'ephemeral' } }]));
      expect(JSON.stringify(b).match(/cache_control/g)?.length ?? 0).toBeLessThanOrEqual(4);
    }
    expect(SYSTEM_PROMPT).not.toMatch(/\d{4}-\d{2}-\d{2}|\d{2}:\d{2}/);
    // Turn n+1's messages begin with turn n's message as the history holds it: the prefix turn n cached.
    for (let n = 0; n < 3; n++) {
      const messages = bodies[n]?.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
      const next = bodies[n + 1]?.messages as typeof messages;
      const asked = messages.at(-1)!;
      expect(asked.content.at(-1)).toEqual({ type: 'text', text: turnContext(DAY + n * 3_600_000, 'Europe/Berlin') });
      const askedBlock = asked.content.at(-2)!;
      expect(askedBlock.cache_control).toEqual({ type: 'ephemeral' });
      expect(unmarked([...messages.slice(0, -1), { role: 'user', content: [askedBlock] }])).toBe(unmarked(next.slice(0, messages.length)));
      // The history's last block is a breakpoint too (what the next turn reads from the cache).
      if (n > 0) expect(messages.at(-2)?.content.at(-1)?.cache_control).toEqual({ type: 'ephemeral' });
    }
  });

  it('OpenAI-compatible: system prompt, tools and history come first and repeat byte for byte; the context follows the message', async () => {
    const srv = await replay([{ body: fixture('openai-text.sse') }]);
    const llm = createOpenAiCompatibleProvider({ baseUrl: srv.url, model: 'gpt-4o' });
    for (const n of [0, 1, 2]) await llm.step(turn(n), sink());
    const bodies = srv.seen.map((s) => s.body);
    for (let n = 0; n < 2; n++) {
      const messages = bodies[n]?.messages as Array<{ role: string; content: string }>;
      const next = bodies[n + 1]?.messages as typeof messages;
      expect(JSON.stringify(bodies[n + 1]?.tools)).toBe(JSON.stringify(bodies[n]?.tools));
      expect(next[0]).toEqual({ role: 'system', content: SYSTEM_PROMPT });
      expect(JSON.stringify(next.slice(0, messages.length - 1))).toBe(JSON.stringify(messages.slice(0, -1)));
      // The message, then the context line: the next turn's history entry is a prefix of it.
      expect(messages.at(-1)?.content.startsWith(`${next[messages.length - 1]?.content}\n\n[Now: `)).toBe(true);
    }
  });

  it('tool schemas go on the wire without the bounds their parsers enforce, in catalog order', () => {
    expect(tools.map((t) => t.id)).toEqual(['fs.read', 'memory.recall', 'mission.create', 'fs.attach']);
    const wire = JSON.stringify(tools);
    expect(wire).not.toMatch(/maxLength|maxItems|minItems|"maximum"|additionalProperties/);
    expect(wire).toContain('"required":["path"]');
  });
});
