/**
 * What the turn's activity concerns share, built once from the worker's deps: the ports, the tools
 * by id, the claim of the verified turn, and the `ScopeDenied` entry both the workflow's and the
 * worker's scope checks write.
 */
import { Scope } from '../../core/capability/index.js';
import { inputHash } from '../../core/canonical-json.js';
import type { ToolOutcome } from '../../core/outcomes.js';
import type { ToolCall } from '../../core/tools.js';
import { activityKey, currentExecution } from '../execution.js';
import { createMcpClasses, type McpClasses } from '../mcp/mcp-classes.js';
import type { ToolCallFacts } from '../ports.js';
import type { TrustedPlaces } from '../taint-labels.js';
import type { ToolImplementation } from '../tools/tool-implementation.js';
import type { ScheduledCall, TurnActivityDeps, TurnAuthority } from './types.js';

/** The turn activities' shared context. */
export interface TurnContext {
  readonly deps: TurnActivityDeps;
  /** The tools this worker implements, by id. */
  readonly toolsById: ReadonlyMap<string, ToolImplementation>;
  /** The owner's own files and vouched-for servers (taint labels). */
  readonly places: TrustedPlaces;
  /** How MCP tools are classified: the owner's classification and the declarations of servers the owner trusts. */
  readonly mcpClasses: McpClasses;
  /** Audits `ScopeDenied` for a call (keyed under `key`, the running activity's by default) and returns its outcome. */
  denied(turnId: string, call: Pick<ToolCall, 'callId' | 'tool'>, scope: string, held: string[], key?: string): Promise<ToolOutcome>;
  /** The claim of the turn this activity runs in, when this run verified it. */
  turnAuthority(turnId: string): Promise<TurnAuthority | undefined>;
}

/** Builds the turn activities' shared context. */
export function createTurnContext(deps: TurnActivityDeps): TurnContext {
  return {
    deps,
    toolsById: new Map(deps.tools.map((t) => [t.descriptor.id, t])),
    places: deps.agent.trustedPlaces ?? {},
    mcpClasses: createMcpClasses(deps.agent.mcpTools ?? {}, deps.mcp?.trustHints ?? [], deps.mcp?.pool),

    async denied(turnId, call, scope, held, key = activityKey()) {
      const parsed = Scope.tryParse(scope);
      await deps.audit.append(`${key}/denied/${scope}`, {
        type: 'ScopeDenied',
        turnId,
        callId: call.callId,
        toolAttempted: call.tool,
        scopeRequested: parsed?.base ?? scope,
        scopeQualifier: parsed?.qualifier ?? null,
        heldCapabilities: held,
      });
      return { status: 'Denied', scope, held };
    },

    async turnAuthority(turnId) {
      const { workflowId, runId } = currentExecution();
      if (workflowId !== turnId) return undefined;
      const held = await deps.claims.read<TurnAuthority>('turn', turnId);
      return held && held.workflowId === workflowId && held.runId === runId ? held.data : undefined;
    },
  };
}

/** The facts of a call as the workflow scheduled it (for calls runTool never reported on). */
export function scheduledFacts(c: ScheduledCall): ToolCallFacts {
  return {
    idemKey: c.idemKey,
    turnId: c.turnId,
    callId: c.call.callId,
    tool: c.call.tool,
    scope: c.scope,
    inputHash: inputHash(c.call.input),
  };
}
