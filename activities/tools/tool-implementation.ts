/** The contract every tool activity implementation satisfies (the Node-side half of a tool). */
import type { AttachmentRef } from '../../core/attachments.js';
import type { MemoryOperation } from '../../core/audit-events.js';
import type { ChannelFacts, ReplyRoute } from '../../core/channel.js';
import type { Verification } from '../../core/outcomes.js';
import type { ToolDescriptor } from '../../core/tools.js';
import type { ToolDefinition } from '../../core/tools/define-tool.js';
import type { SpendMeter } from '../ports.js';

/** What the activity hands a running tool. */
export interface ToolRunContext {
  /** Aborted when the activity is cancelled (turn cancelled, budget spent, worker shutting down). */
  signal: AbortSignal;
  /** Activity heartbeat: long-running tools call it so a dead worker is noticed quickly. */
  heartbeat(details?: unknown): void;
  /** `workflowId/runId/activityId`: stable across retries, so it keys intents and deterministic names. */
  idemKey: string;
  /** The turn this call belongs to. */
  turnId: string;
  /** The session of the turn (its attested channel facts); tools that read "this conversation only" filter by it. */
  sessionId?: string;
  /** The turn's verified channel facts (who asked, on which channel, at which tier). */
  channel?: ChannelFacts;
  /** Where the turn's reply goes, if it has a route (a mission it starts reports there too). */
  replyRoute?: ReplyRoute;
  /** The capabilities the turn holds (scope strings), for tools whose effect depends on them. */
  held: readonly string[];
  /** Appends the dedicated `MemoryAccess` audit entry (seed D4); idempotent per call and operation. */
  recordMemoryAccess(entry: { operation: MemoryOperation; scope: string; queryOrKey: string }): Promise<void>;
  /** The untrusted content the turn had read before this call (empty: none); a memory written now carries it. */
  taint?: readonly string[];
  /** Set only when a person approved exactly this call (the turn's verified one-shot grant covers it): the gate that did. */
  approval?: { missionId: string; gateId: string };
  /** A tool that asks a model itself (value.read) checks the turn's spend budgets here first, and charges the call to the turn. */
  spend?: SpendMeter;
}

/** What a tool run ends as; failures are thrown as AivyxError('Tool' | 'Cancelled' | ...). */
export type ToolRunResult =
  | {
      kind: 'completed';
      output: unknown;
      verified: Verification;
      /** This result is untrusted, and why (a recalled memory written after untrusted content); see activities/taint-labels.ts. */
      untrusted?: string;
      /** A file this call handed to the person who asked (`fs.attach`): streamed to their channel as an `attachment` event. */
      attachment?: AttachmentRef;
    }
  | { kind: 'escalate'; reason: string };

/**
 * One tool implementation as the activity runs it: its descriptor, its canonical scope re-check and
 * its effect, over the raw input the model gave. Made by {@link implementTool}, which parses that input first.
 */
export interface ToolImplementation {
  descriptor: ToolDescriptor;
  /**
   * The scope this call really touches, over canonical forms (symlinks resolved). The activity
   * re-checks it against the held capabilities, so a symlink escaping a granted directory is caught.
   */
  resolveScope(input: unknown): Promise<string>;
  /** Performs the call. Throws AivyxError for failures (kind `Tool` unless another kind fits better). */
  run(input: unknown, ctx: ToolRunContext): Promise<ToolRunResult>;
}

/** What an implementation states, over its definition's parsed (canonical) input. */
export interface ToolImplementationSpec<I> {
  /**
   * The scope this call really touches, over canonical forms on the host (symlinks resolved); without
   * it, the definition's own scope of the input (a tool with nothing on the host to resolve).
   */
  resolveScope?(input: I): Promise<string>;
  /** Performs the call. Throws AivyxError for failures (kind `Tool` unless another kind fits better). */
  run(input: I, ctx: ToolRunContext): Promise<ToolRunResult>;
}

/**
 * Implements `definition`: each call's raw input goes through the definition's parser first (a bad
 * input is refused as `InvalidScope` naming the field), so `spec` gets the parsed input with its type.
 */
export function implementTool<I>(definition: ToolDefinition<I>, spec: ToolImplementationSpec<I>): ToolImplementation {
  return {
    descriptor: definition,
    resolveScope: async (input) => (spec.resolveScope ? spec.resolveScope(definition.parse(input)) : definition.requiredScope(input)),
    run: async (input, ctx) => spec.run(definition.parse(input), ctx),
  };
}
