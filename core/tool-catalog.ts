/**
 * The tool registry: every tool definition, in the order the model is shown them. Everything the
 * workflow needs about a tool (its scope rule, whether it is interruptible, confirm-first by default,
 * its provenance) derives from its definition (core/tools/define-tool.ts). Adding a tool: one
 * definition file, one implementation file, one line here and one in app/wiring.ts (docs/CONTRIBUTING.md).
 */
import { AivyxError } from './errors.js';
import type { ToolSpec } from './llm.js';
import type { ToolDefinition } from './tools/define-tool.js';
import { fsReadTool } from './tools/fs-read.js';
import { fsWriteTool } from './tools/fs-write.js';
import { shellExecTool } from './tools/shell-exec.js';
import { memoryWriteTool } from './tools/memory-write.js';
import { memoryRecallTool } from './tools/memory-recall.js';
import { memoryForgetTool } from './tools/memory-forget.js';
import { fsDeleteTool } from './tools/fs-delete.js';
import { fsMetadataTool } from './tools/fs-metadata.js';
import { netFetchTool, netPostTool } from './tools/net-tools.js';
import { gitCommitTool, gitDiffTool, gitStatusTool } from './tools/git-tools.js';
import { auditReadTool, configReadTool, configWriteTool } from './tools/config-tools.js';
import { mcpCallTool } from './tools/mcp-tools.js';
import { shellSpawnTool } from './tools/shell-spawn.js';
import { channelSendTool } from './tools/channel-send.js';
import { missionCreateTool } from './tools/mission-create.js';
import { missionListTool } from './tools/mission-list.js';
import { missionCancelTool } from './tools/mission-cancel.js';
import { valueReadTool } from './tools/value-read.js';
import { skillProposeTool } from './tools/skill-propose.js';
import { skillListTool } from './tools/skill-list.js';
import { skillInvokeTool } from './tools/skill-invoke.js';
import { graphWriteTool } from './tools/graph-write.js';
import { graphQueryTool } from './tools/graph-query.js';
import { agentDelegateTool } from './tools/agent-delegate.js';
import { fsAttachTool } from './tools/fs-attach.js';

const HOST_SCOPE_FAMILIES: ReadonlySet<string> = new Set(['fs', 'shell', 'git', 'mcp']);

/** Every tool, in the order the model is shown them. */
export const TOOL_CATALOG: readonly ToolDefinition[] = Object.freeze([
  fsReadTool,
  fsWriteTool,
  shellExecTool,
  memoryWriteTool,
  memoryRecallTool,
  memoryForgetTool,
  fsDeleteTool,
  fsMetadataTool,
  netFetchTool,
  netPostTool,
  gitStatusTool,
  gitDiffTool,
  gitCommitTool,
  configReadTool,
  configWriteTool,
  auditReadTool,
  mcpCallTool,
  shellSpawnTool,
  channelSendTool,
  missionCreateTool,
  missionListTool,
  missionCancelTool,
  valueReadTool,
  skillProposeTool,
  skillListTool,
  skillInvokeTool,
  graphWriteTool,
  graphQueryTool,
  agentDelegateTool,
  fsAttachTool,
  // New tools go above this line (docs/CONTRIBUTING.md, "Adding a tool").
] as ToolDefinition[]);

/** Tools whose running call the workflow may interrupt (it waits for the cancellation to complete). */
export const INTERRUPTIBLE_TOOLS: ReadonlySet<string> = new Set(TOOL_CATALOG.filter((t) => t.interruptible).map((t) => t.id));

/**
 * Tools that touch the machine they run on (its files, its processes, its repositories, the MCP
 * servers it spawns): they run only on the host's own task queue (AIVYX_HOST_QUEUE) when one is set.
 */
export const HOST_BOUND_TOOLS: ReadonlySet<string> = new Set(
  TOOL_CATALOG.filter((t) => HOST_SCOPE_FAMILIES.has(t.scopeBase.split('.')[0]!)).map((t) => t.id),
);

/** Tools that are confirm-first unless configured otherwise (`AIVYX_CONFIRM_DESTRUCTIVE`). */
export const DEFAULT_CONFIRM_FIRST: readonly string[] = Object.freeze(TOOL_CATALOG.filter((t) => t.confirmFirst).map((t) => t.id));

/** The catalog definition with this id, or undefined. */
export function findTool(id: string): ToolDefinition | undefined {
  return TOOL_CATALOG.find((t) => t.id === id);
}

/** Model-facing specs for `ids` (default: the whole catalog); an unknown id throws AivyxError(NotFound). */
export function toolSpecs(ids?: readonly string[]): ToolSpec[] {
  const chosen =
    ids === undefined
      ? TOOL_CATALOG
      : ids.map((id) => {
          const tool = findTool(id);
          if (!tool)
            throw new AivyxError('NotFound', `unknown tool "${id}"`, {
              detail: { tool: id },
              hint: `known tools: ${TOOL_CATALOG.map((t) => t.id).join(', ')}`,
            });
          return tool;
        });
  return chosen.map((t) => ({ id: t.id, description: t.description, inputSchema: t.inputSchema }));
}
