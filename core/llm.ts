/** The LLM step contract (seed `LlmProvider`), shared by the workflow and the provider activities. */
import type { AuthorityProof } from './authority.js';
import type { HistoryEntry } from './channel.js';
import type { Message } from './message.js';
import type { TokenUsage } from './spend.js';
import type { ToolCall, ToolResult } from './tools.js';

/** What the model has seen so far inside this turn, after the user's message. */
export type TranscriptItem = { role: 'assistant'; text?: string; calls: ToolCall[] } | { role: 'tool'; results: ToolResult[] };

/** A tool as the model is shown it. */
export interface ToolSpec {
  id: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What the workflow sends to the LLM-step activity; the activity adds the session history. */
export type LlmStepInput = Omit<LlmStepRequest, 'history' | 'tools'> & {
  /** Which session's history to load (the session workflow id). */
  sessionKey: string;
  /** The catalog tools offered; the activity builds their schemas (workflow code never needs them). */
  toolIds?: string[];
  /**
   * The deferred tools loaded so far (core/tool-offer.ts): core and loaded tools are offered in full, the
   * rest by name in `tools.load`. Absent (runs from before deferred tools): every tool in `toolIds` in full.
   */
  loadedTools?: string[];
  /** The offered tools as specs: how runs started before `toolIds` scheduled their steps. */
  tools?: ToolSpec[];
};

/** Input of one LLM step, as a provider sees it. */
export interface LlmStepRequest {
  turnId: string;
  /** 0-based index of this step within the turn. */
  step: number;
  history: HistoryEntry[];
  message: Message;
  transcript: TranscriptItem[];
  tools: ToolSpec[];
  /**
   * The system prompt: the same bytes on every step of every session of a worker, so the provider
   * can serve it (and the tools before it) from its prompt cache. Absent: the provider's own, if any.
   */
  system?: string;
  /** What changes between turns (the owner's date and time): sent after the message, outside the cached prefix. */
  context?: string;
}

/** What a step cost: tokens from the provider, cost added by the `llmStep` activity from the price table. */
export interface LlmStepSpend {
  /** Absent in histories older than budgets (counted as nothing). */
  usage?: TokenUsage;
  /** US dollars; absent when the model has no price (its tokens still count). */
  costUsd?: number;
}

/** Result of one LLM step: a final assistant message, or a batch of tool calls to run in parallel. */
export type LlmStepResult = LlmStepSpend &
  (
    | { type: 'final'; text: string }
    | {
        type: 'tool_calls';
        text?: string;
        calls: ToolCall[];
        /**
         * Per call id, the worker's proof that this step of this turn run produced the call (purpose
         * `tool-call`): `runTool` refuses a call without one, so a forged or copied activity result
         * cannot run a tool. Added by the `llmStep` activity, never by a provider.
         */
        callProofs?: Record<string, AuthorityProof>;
      }
  );
