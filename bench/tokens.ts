/**
 * `npm run bench -- --tokens`: what a turn costs with a real model. The scripted conversation
 * (bench/token-script.ts) runs through the real providers against local stand-ins that count
 * tokens and prompt-cache hits as Anthropic and OpenAI do (bench/token-standins.ts), with the
 * prompt built as `llmStep` builds it: system prompt, the Trusted tier's tools (the core ones in
 * full, the rest by name in `tools.load` until the model loads them: a scripted call of a deferred
 * tool is preceded by the model step that loads it, and what is loaded stays loaded for the
 * session), the history window and compaction, the turn's context line. The baseline is the same conversation with the prompt
 * as it was before (every catalog tool with its full schema, no system prompt, no cache
 * breakpoints, the last 40 history entries), measured in the same run.
 */
import type { HistoryEntry } from '../core/channel.js';
import { CapabilitySet, tierCeiling } from '../core/capability/index.js';
import type { LlmStepRequest, ToolSpec, TranscriptItem } from '../core/llm.js';
import type { ToolOutcome } from '../core/outcomes.js';
import { textContent } from '../core/message.js';
import { TOOL_CATALOG, toolSpecs } from '../core/tool-catalog.js';
import { loadOutcome, loadTools, toolOffer } from '../core/tool-offer.js';
import { TOOLS_LOAD } from '../core/tools/tools-load.js';
import { createAnthropicProvider } from '../activities/llm/anthropic.js';
import { compactedHistory, SUMMARY_PROMPT } from '../activities/llm/compaction.js';
import type { LlmProvider, LlmStepSink } from '../activities/llm/llm-provider.js';
import { createOpenAiCompatibleProvider, wireToolName } from '../activities/llm/openai-compatible.js';
import { entryCounter, MESSAGE_FRAMING_TOKENS, offeredSpecs, offeredToolIds, wireSpec } from '../activities/llm/step-prompt.js';
import { SYSTEM_PROMPT, turnContext } from '../activities/llm/system-prompt.js';
import { countTokens, loadTokenizer, type TokenFamily } from '../activities/llm/token-count.js';
import type { StoredHistory, StoredTurn, HistorySummary } from '../activities/ports.js';
import { DEFAULT_AGENT_CAPABILITIES } from '../infra/config/env-table.js';
import { TOKEN_SCRIPT, type ScriptedTurn } from './token-script.js';
import { startStandIn, type StandInReply } from './token-standins.js';

/** The bench's history budget: small enough that the 20 turns compact (the default is 8,000). */
const BUDGET = 800;
const TIME_ZONE = 'Europe/Berlin';
const START = Date.UTC(2026, 11, 5, 8, 0);

interface TurnRow {
  input: number;
  cached: number;
  written: number;
  steps: number;
  historyTokens: number;
  compacted: boolean;
}

const sink: LlmStepSink = { text: () => undefined, heartbeat: () => undefined, signal: new AbortController().signal };

/** A session history in memory, with the same summary rule as infra/session-history.ts. */
function memoryHistory() {
  const turns: StoredTurn[] = [];
  let summary: HistorySummary | undefined;
  return {
    record: (key: string, entries: HistoryEntry[]) => void turns.push({ key, entries }),
    loadTurns: async (): Promise<StoredHistory> => ({
      ...(summary ? { summary } : {}),
      turns: turns.filter((t) => !summary || t.key > summary.through),
    }),
    saveSummary: async (_key: string, s: HistorySummary) => void (summary = s),
    all: (): HistoryEntry[] => turns.flatMap((t) => t.entries),
  };
}

/** One model step's call, as the script plays it. */
type ScriptedCall = NonNullable<ScriptedTurn['calls']>[number];

/** Answers each request from the script: the turn's calls one per step, then its reply; a summary for the summariser. */
function scriptedAnswers(): {
  answer: (body: Record<string, unknown>) => StandInReply;
  begin(turn: ScriptedTurn, calls: ScriptedCall[]): void;
} {
  let turn: ScriptedTurn = TOKEN_SCRIPT[0]!;
  let calls: ScriptedCall[] = [];
  let step = 0;
  return {
    begin(t, c) {
      turn = t;
      calls = c;
      step = 0;
    },
    answer(body) {
      const system = JSON.stringify(body.system ?? (body.messages as Array<{ content: unknown }>)[0]?.content);
      if (system.includes(SUMMARY_PROMPT.slice(0, 40)))
        return {
          text: 'The person asked about their todo list, reminders, reports and notes; the assistant read and wrote files, created and listed missions and recalled notes as asked.',
        };
      const call = calls[step++];
      return call ? { calls: [{ name: wireToolName(call.tool), input: call.input }] } : { text: turn.reply };
    },
  };
}

/** The tools the Trusted CLI's turns are granted with the default capabilities (openTurn's `toolIds`). */
function trustedToolIds(): string[] {
  const effective = CapabilitySet.from(DEFAULT_AGENT_CAPABILITIES).intersect(tierCeiling('Trusted')).toJSON();
  return offeredToolIds(
    TOOL_CATALOG.map((t) => t.id),
    effective,
  );
}

/**
 * The turn's calls as the model makes them: before the first call of a deferred tool the session has
 * not loaded, the step that loads it (its result computed as the workflow computes it).
 */
function withLoads(calls: readonly ScriptedCall[], granted: readonly string[], loaded: readonly string[]): ScriptedCall[] {
  const planned = new Set(loaded);
  const deferred = toolOffer(granted, loaded).deferred;
  return calls.flatMap((call) => {
    if (!deferred.includes(call.tool) || planned.has(call.tool)) return [call];
    planned.add(call.tool);
    return [{ tool: TOOLS_LOAD, input: { tools: [call.tool] }, output: undefined }, call];
  });
}

/** Runs the script against a stand-in of `format`: per turn, what the stand-in counted. */
async function converse(format: TokenFamily, legacy: boolean): Promise<TurnRow[]> {
  const script = scriptedAnswers();
  const standIn = await startStandIn(format, script.answer);
  const llm: LlmProvider =
    format === 'anthropic'
      ? createAnthropicProvider({ baseUrl: standIn.url, model: 'claude-sonnet-4-5', apiKey: 'bench', promptCache: !legacy })
      : createOpenAiCompatibleProvider({ baseUrl: `${standIn.url}/v1`, model: 'gpt-4o' });
  const history = memoryHistory();
  const granted = trustedToolIds();
  // The session's loaded deferred tools, carried from turn to turn as the session workflow does.
  let loaded: string[] = [];
  const toolsNow = (): ToolSpec[] => (legacy ? toolSpecs() : offeredSpecs(granted, loaded).map(wireSpec));
  const count = entryCounter(format);
  const rows: TurnRow[] = [];
  try {
    for (const [i, turn] of TOKEN_SCRIPT.entries()) {
      const calls = legacy ? (turn.calls ?? []) : withLoads(turn.calls ?? [], granted, loaded);
      script.begin(turn, calls);
      const receivedAt = START + i * 20 * 60_000;
      const message = { id: `m${i}`, sessionId: 's1', receivedAt, content: textContent(turn.user) };
      const context = turnContext(receivedAt, TIME_ZONE);
      const before = standIn.counted.length;
      const messageTokens = countTokens(`${turn.user}\n\n${context}`, format) + MESSAGE_FRAMING_TOKENS;
      let window: HistoryEntry[];
      let historyTokens: number;
      let compacted = false;
      if (legacy) {
        window = history.all().slice(-40);
        historyTokens = window.reduce((n, e) => n + count(e), 0);
      } else {
        const input = { sessionKey: 's1', budget: BUDGET, messageTokens, count, turnId: `t${i}`, step: 0 };
        const fitted = await compactedHistory(history, llm, sink, input);
        window = fitted.window.entries;
        historyTokens = fitted.window.tokens + messageTokens;
        compacted = fitted.usage !== undefined;
        if (historyTokens > BUDGET) throw new Error(`turn ${i + 1}: the history exceeds its budget`);
      }
      const transcript: TranscriptItem[] = [];
      /** A call's result: a load as the workflow answers it (and the session keeps it loaded), else the script's output. */
      const played = (c: { tool: string; input: unknown }, scripted: ScriptedCall | undefined): ToolOutcome => {
        if (c.tool !== TOOLS_LOAD) return { status: 'Completed', output: scripted?.output, verified: 'Verified' };
        const result = loadTools(c.input, granted, loaded);
        if (result.ok) loaded = result.loaded;
        return loadOutcome(result);
      };
      for (let step = 0; ; step++) {
        const req: LlmStepRequest = {
          turnId: `t${i}`,
          step,
          history: window.map(({ role, text }) => ({ role, text })),
          message,
          transcript,
          tools: toolsNow(),
          ...(legacy ? {} : { system: SYSTEM_PROMPT, context }),
        };
        const result = await llm.step(req, sink);
        if (result.type === 'final') break;
        transcript.push({ role: 'assistant', calls: result.calls });
        transcript.push({
          role: 'tool',
          results: result.calls.map((c) => ({ callId: c.callId, tool: c.tool, outcome: played(c, calls[step]) })),
        });
      }
      history.record(String(receivedAt).padStart(15, '0'), [
        { role: 'user', text: turn.user },
        { role: 'assistant', text: turn.reply },
      ]);
      const seen = standIn.counted.slice(before);
      rows.push({
        input: seen.reduce((n, c) => n + c.input, 0),
        cached: seen.reduce((n, c) => n + c.cached, 0),
        written: seen.reduce((n, c) => n + c.written, 0),
        steps: transcript.length / 2 + 1,
        historyTokens,
        compacted,
      });
      if (i === 0) firstRequest.set(`${format}${legacy ? ' legacy' : ''}`, seen[0]!.input);
    }
  } finally {
    await standIn.close();
  }
  return rows;
}

const firstRequest = new Map<string, number>();
const pct = (a: number, b: number): string => `${b === 0 ? 0 : ((100 * a) / b).toFixed(1)}%`;
const sum = (rows: TurnRow[], f: (r: TurnRow) => number): number => rows.reduce((n, r) => n + f(r), 0);
/** Input as billed, in uncached-token equivalents: reads at 0.1× and writes at 1.25× (Anthropic), reads at 0.5× (OpenAI). */
const billed = (rows: TurnRow[], readPrice: number): number =>
  sum(rows, (r) => r.input - r.cached - r.written + readPrice * r.cached + (readPrice < 0.5 ? 1.25 : 1) * r.written);

function table(format: TokenFamily, rows: TurnRow[]): string[] {
  return [
    `### ${format === 'anthropic' ? 'Anthropic messages (cache_control breakpoints)' : 'OpenAI chat completions (automatic prefix caching)'}`,
    '',
    '| turn | steps | input tokens | cached | uncached | cached share | history + message / budget |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r, i) =>
        `| ${i + 1} | ${r.steps}${r.compacted ? ' + summary' : ''} | ${r.input} | ${r.cached} | ${r.input - r.cached} | ${pct(r.cached, r.input)} | ${r.historyTokens} / ${BUDGET} |`,
    ),
  ];
}

/** The tokens section of docs/BENCHMARKS.md, as lines. */
export async function benchTokens(): Promise<string[]> {
  await loadTokenizer();
  const out: string[] = [];
  const summary: string[] = ['| measure | Anthropic | OpenAI | target |', '|---|---|---|---|'];
  const results = new Map<TokenFamily, { now: TurnRow[]; legacy: TurnRow[] }>();
  for (const format of ['anthropic', 'openai'] as const)
    results.set(format, { now: await converse(format, false), legacy: await converse(format, true) });
  const a = results.get('anthropic')!;
  const o = results.get('openai')!;
  const later = (rows: TurnRow[]) => rows.slice(1);
  const ratio = (rows: TurnRow[]) => sum(later(rows), (r) => r.cached) / sum(later(rows), (r) => r.input);
  const minShare = (rows: TurnRow[]) => Math.min(...later(rows).map((r) => r.cached / r.input));
  summary.push(
    `| first turn's input tokens (Trusted CLI, default tools) | ${firstRequest.get('anthropic')} (before: ${firstRequest.get('anthropic legacy')}) | ${firstRequest.get('openai')} (before: ${firstRequest.get('openai legacy')}) | ≤ 2,000 |`,
    `| cached share of input tokens, turns 2–20 | **${pct(ratio(a.now) * 100, 100)}** (lowest turn ${pct(minShare(a.now) * 100, 100)}) | ${pct(ratio(o.now) * 100, 100)} (lowest turn ${pct(minShare(o.now) * 100, 100)}) | ≥ 80% (Anthropic) |`,
    `| input tokens of the 20 turns, × before | ${(sum(a.now, (r) => r.input) / sum(a.legacy, (r) => r.input)).toFixed(2)}× | ${(sum(o.now, (r) => r.input) / sum(o.legacy, (r) => r.input)).toFixed(2)}× | |`,
    `| input as billed (Anthropic: reads 0.1×, writes 1.25×; OpenAI: reads 0.5×), × before | ${(billed(a.now, 0.1) / billed(a.legacy, 0.1)).toFixed(2)}× | ${(billed(o.now, 0.5) / billed(o.legacy, 0.5)).toFixed(2)}× | |`,
    `| largest history + message / budget | ${Math.max(...a.now.map((r) => r.historyTokens))} / ${BUDGET} | ${Math.max(...o.now.map((r) => r.historyTokens))} / ${BUDGET} | never over |`,
  );
  out.push('## What a turn costs in tokens', '', ...summary, '', ...table('anthropic', a.now), '', ...table('openai', o.now));
  return out;
}
