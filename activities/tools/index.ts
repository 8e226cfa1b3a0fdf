/** The starter tool implementations (fs.read, fs.write, shell.exec) and their contract. */
import { createFsReadTool } from './fs-read.js';
import { createFsWriteTool } from './fs-write.js';
import type { IntentStore } from './intent-store.js';
import { createShellExecTool, type ShellExecDeps } from './shell-exec.js';
import type { ToolImplementation } from './tool-implementation.js';

export type { ToolImplementation, ToolRunContext, ToolRunResult } from './tool-implementation.js';
export type { IntentStore, IntentRecord, MemoryIntentStore } from './intent-store.js';
export { createMemoryIntentStore } from './intent-store.js';
export { createFsReadTool, FS_READ_DEFAULT_MAX_BYTES, type FsReadOutput, type FsReadOptions } from './fs-read.js';
export { createFsWriteTool, type FsWriteOutput } from './fs-write.js';
export { createShellExecTool, SHELL_DEFAULT_TIMEOUT_MS, SHELL_OUTPUT_CAP_BYTES, SHELL_ENV_ALLOWLIST, type ShellExecDeps, type ShellExecOutput } from './shell-exec.js';

/** Ports of the starter tools: the intent store (required) plus optional shell settings. */
export interface StarterToolDeps {
  intents: IntentStore;
  shell?: Omit<ShellExecDeps, 'intents'>;
}

/** The three starter tools, in catalog order. */
export function createStarterTools(deps: StarterToolDeps): ToolImplementation[] {
  return [createFsReadTool(), createFsWriteTool(), createShellExecTool({ intents: deps.intents, ...deps.shell })];
}
