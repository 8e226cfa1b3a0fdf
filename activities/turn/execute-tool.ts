/** The effect itself: a tool implementation run for one call that passed every check, with its stream events and output label. */
import { Context } from '@temporalio/activity';
import { summarizeToolOutcome, type ToolOutcome } from '../../core/outcomes.js';
import type { ToolCall } from '../../core/tools.js';
import { withHeartbeat } from '../execution.js';
import { errorData } from '../failure.js';
import type { SpendMeter, ToolCallFacts } from '../ports.js';
import { outputLabel } from '../taint-labels.js';
import type { ToolImplementation } from '../tools/tool-implementation.js';
import type { TurnContext } from './context.js';
import type { TurnAuthority } from './types.js';

/** One call, ready to run: what the checks established. */
export interface ReadyCall {
  call: ToolCall;
  facts: ToolCallFacts;
  impl: ToolImplementation;
  authority: TurnAuthority;
  /** The resolved scope the call was granted under. */
  scope: string;
  /** The untrusted sources in the turn's context before the call. */
  sources: string[];
  /** What the call's own model calls spend for the turn (value.read's quarantined reader). */
  spend?: SpendMeter;
}

/**
 * Runs the call's implementation (heartbeating, cancellable) and returns its outcome and, when its
 * result (or failure text) is untrusted, the label that result carries.
 */
export async function executeTool(
  { deps, places }: TurnContext,
  ready: ReadyCall,
): Promise<{ outcome: ToolOutcome; untrustedOutput?: string }> {
  const { call, facts, authority, scope } = ready;
  const turnId = facts.turnId;
  const key = facts.idemKey;
  deps.stream.publish(turnId, { type: 'tool_started', tool: call.tool, callId: call.callId });
  let outcome: ToolOutcome;
  let untrustedOutput: string | undefined;
  try {
    const ctx = Context.current();
    let lastDetails: unknown;
    const result = await withHeartbeat(
      () =>
        ready.impl.run(call.input, {
          signal: ctx.cancellationSignal,
          heartbeat: (d) => {
            lastDetails = d;
            ctx.heartbeat(d);
          },
          idemKey: key,
          turnId,
          sessionId: authority.sessionId,
          ...(authority.channel ? { channel: authority.channel } : {}),
          ...(authority.replyRoute ? { replyRoute: authority.replyRoute } : {}),
          held: authority.effective,
          taint: ready.sources,
          ...(ready.spend ? { spend: ready.spend } : {}),
          // The grant was verified with the turn; runTool let a gated call through only on it.
          ...(authority.grant?.tool === call.tool && authority.grant.inputHash === facts.inputHash
            ? { approval: { missionId: authority.grant.missionId, gateId: authority.grant.gateId } }
            : {}),
          recordMemoryAccess: async (entry) => {
            await deps.audit.append(`${key}/memory/${entry.operation}`, { type: 'MemoryAccess', turnId, ...entry });
          },
        }),
      () => lastDetails,
    );
    outcome =
      result.kind === 'completed'
        ? { status: 'Completed', output: result.output, verified: result.verified }
        : { status: 'RequiresEscalation', reason: result.reason };
    untrustedOutput = outputLabel(call.tool, call.input, scope, result.kind === 'completed' ? result.untrusted : undefined, places);
    if (result.kind === 'completed' && result.attachment)
      deps.stream.publish(turnId, { type: 'attachment', attachment: result.attachment });
  } catch (e) {
    outcome = { status: 'Failed', error: errorData(e, 'Tool') };
    // A failure's message can carry what the tool read (a server's error text): labelled like its output.
    untrustedOutput = outputLabel(call.tool, call.input, scope, undefined, places);
  }
  deps.stream.publish(turnId, { type: 'tool_finished', tool: call.tool, callId: call.callId, summary: summarizeToolOutcome(outcome) });
  return { outcome, ...(untrustedOutput ? { untrustedOutput } : {}) };
}
