/** The starter tool implementations (fs.read, fs.write, shell.exec, and memory.* when given a store) and their contract. */
import { createFsDeleteTool, type FsDeleteOptions } from './fs-delete.js';
import { createFsMetadataTool } from './fs-metadata.js';
import { createFsReadTool } from './fs-read.js';
import { createFsWriteTool } from './fs-write.js';
import type { IntentStore } from './intent-store.js';
import type { MemoryStore } from './memory-port.js';
import { createMemoryTools } from './memory-tools.js';
import { createNetFetchTool, type NetToolDeps } from './net-fetch.js';
import { createNetPostTool } from './net-post.js';
import { createShellExecTool, type ShellExecDeps } from './shell-exec.js';
import type { ToolImplementation } from './tool-implementation.js';
import type { ProtectedPaths } from './confinement.js';

export type { ToolImplementation, ToolRunContext, ToolRunResult } from './tool-implementation.js';
export type { IntentStore, IntentRecord, MemoryIntentStore } from './intent-store.js';
export { createMemoryIntentStore } from './intent-store.js';
export { createFsReadTool, FS_READ_DEFAULT_MAX_BYTES, type FsReadOutput, type FsReadOptions } from './fs-read.js';
export { createFsWriteTool, type FsWriteOutput, type FsWriteOptions } from './fs-write.js';
export { NO_PROTECTED_PATHS, PROC_FD, isProtectedPath, type ProtectedPaths } from './confinement.js';
export type { MemoryStore, MemoryEntry, RecallResult } from './memory-port.js';
export {
  createMemoryTools,
  type MemoryToolDeps,
  type MemoryWriteOutput,
  type MemoryRecallOutput,
  type MemoryRecallEntry,
  type MemoryForgetOutput,
} from './memory-tools.js';
export { createFsDeleteTool, type FsDeleteOptions, type FsDeleteOutput, type FsEntryType } from './fs-delete.js';
export { createFsMetadataTool, type FsMetadataOutput, type FsMetadataOptions } from './fs-metadata.js';
export {
  createNetFetchTool,
  blockedAddressReason,
  type NetToolDeps,
  type NetResponseOutput,
  type HostResolver,
  type ResolvedAddress,
} from './net-fetch.js';
export { createNetPostTool, idempotencyKeyFor } from './net-post.js';
export {
  createShellSpawnTool,
  headTailBuffer,
  SPAWN_OUTPUT_CAP_BYTES,
  SPAWN_HEARTBEAT_MS,
  SPAWN_KILL_GRACE_MS,
  type ShellSpawnDeps,
  type ShellSpawnOutput,
  type ShellSpawnProgress,
} from './shell-spawn.js';
export {
  createSkillTools,
  type SkillToolDeps,
  type SkillProposeOutput,
  type SkillListOutput,
  type SkillInvokeOutput,
} from './skill-tools.js';
export type { SkillStore, StoredSkill, SkillSummary, SkillApproval } from './skill-port.js';
export { createGraphTools, type GraphToolDeps, type GraphWriteOutput, type GraphQueryOutput } from './graph-tools.js';
export type { GraphStore, GraphAnswer, GraphEntity, GraphQueryResult } from './graph-port.js';
export { createChannelSendTool, channelSenderFromRegistry, type ChannelSender, type ChannelSendOutput } from './channel-send.js';
export {
  createShellExecTool,
  scrubbedCommandEnv,
  SHELL_DEFAULT_TIMEOUT_MS,
  SHELL_OUTPUT_CAP_BYTES,
  SHELL_ENV_ALLOWLIST,
  type ShellExecDeps,
  type ShellExecOutput,
} from './shell-exec.js';

/** Ports of the starter tools: the intent store (required), optional shell settings, and the memory store. */
export interface StarterToolDeps {
  intents: IntentStore;
  shell?: Omit<ShellExecDeps, 'intents'>;
  /** With a store, memory.write/recall/forget are added; without, a call to them fails NotFound. */
  memory?: MemoryStore;
  /** Options of fs.delete (the protected home directory). */
  fsDelete?: FsDeleteOptions;
  /** Ports of net.fetch/net.post (name resolution). */
  net?: NetToolDeps;
  /** Paths no fs or shell call may reach below Kernel (the data directory); default none. */
  protectedPaths?: ProtectedPaths;
}

/** The starter tools in catalog order: fs.read, fs.write, shell.exec, the memory tools when `memory` is given, then fs.delete, fs.metadata, net.fetch, net.post. */
export function createStarterTools(deps: StarterToolDeps): ToolImplementation[] {
  const confined = deps.protectedPaths === undefined ? {} : { protectedPaths: deps.protectedPaths };
  const tools = [
    createFsReadTool(confined),
    createFsWriteTool(confined),
    createShellExecTool({ intents: deps.intents, ...deps.shell, ...confined }),
  ];
  const extra = [
    createFsDeleteTool({ ...deps.fsDelete, ...confined }),
    createFsMetadataTool(confined),
    createNetFetchTool(deps.net),
    createNetPostTool(deps.net),
  ];
  return deps.memory === undefined ? [...tools, ...extra] : [...tools, ...createMemoryTools({ store: deps.memory }), ...extra];
}
