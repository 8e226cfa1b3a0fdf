/**
 * What a running stack is and how it is asked for (app/stack.ts starts it), and what the phases of
 * starting it share: kept apart from stack.ts so its phases (app/stack-*.ts) can name them.
 */
import type { Client } from '@temporalio/client';
import type { LlmProvider } from '../activities/llm/llm-provider.js';
import type { AivyxError } from '../core/errors.js';
import type { AivyxConfig } from '../infra/config.js';
import type { Health } from '../infra/health.js';
import type { HomeRole } from '../infra/home-lock.js';

/** A running stack. */
export interface Stack {
  /** The REST channel (none in the `worker` role). */
  restUrl: string | undefined;
  restToken: string;
  /** The owner's app (none in the `worker` role or for a headless stack). */
  appUrl: string | undefined;
  temporalAddress: string;
  /** The install's public identity (MasterKey.installId): it names the default task queue and marks the namespace. */
  installId: string;
  /** The task queue this install's workflows run on (AIVYX_TASK_QUEUE, else `aivyx-<first 8 of installId>`). */
  taskQueue: string;
  uiUrl: string | undefined;
  /** The codec server the Temporal UI decodes payloads through (not started for a headless stack). */
  codecUrl: string | undefined;
  client: Client;
  /** Temporal, the database and the channels, as /v1/health reports them. */
  health: Health;
  /** Settles only if the stack cannot go on (its dev server could not be brought back): stop it and exit. */
  failed: Promise<AivyxError>;
  /** Stops everything started here, in reverse order. */
  stop(): Promise<void>;
}

/** Options beyond the configuration. */
export interface StackOptions {
  config: AivyxConfig;
  passphrase: string;
  /** First run at a prompt: the passphrase typed again before the install is created (infra/keyring.ts). */
  confirmPassphrase?: () => Promise<string>;
  projectRoot: string;
  env: NodeJS.ProcessEnv;
  /**
   * `up`, or a command running on its own stack (`--standalone`): named in the data directory's lock.
   * `worker` and `gateway` are the scale-out roles (many per install; no lock on the data directory).
   */
  role?: StackRole;
  /** `worker` role: do not poll the host queue (this machine does not own the files). */
  noHostTools?: boolean;
  /** Bind the REST channel to the configured port (`up`) or any free port (`chat` standalone). */
  restPort?: number;
  /** Start the dev server without the UI (standalone chat). */
  headless?: boolean;
  /** Progress lines for the person starting it (also: a dependency going down and coming back). */
  log?: (line: string) => void;
  llm?: LlmProvider;
}

/** What one process runs. */
export type StackRole = Extract<HomeRole, 'up' | 'standalone'> | 'worker' | 'gateway';

/** Stops one thing the stack started; run in reverse order of starting when the stack stops. */
export type Cleanup = () => Promise<void> | void;

/** What every phase of starting the stack is given: the request, and where to leave what must be stopped. */
export interface StackStart {
  config: AivyxConfig;
  opts: StackOptions;
  role: StackRole;
  log: (line: string) => void;
  /** Each phase pushes the stop of what it started; the stack runs them reversed. */
  cleanups: Cleanup[];
}

/** Whether this role runs the worker (workflows and activities). */
export const runsWorker = (role: StackRole) => role !== 'gateway';
/** Whether this role runs the channels (REST, the chat channels, the app). */
export const runsChannels = (role: StackRole) => role !== 'worker';

/** The install's default task queue: its identity in the name, so no other install's worker ever polls it. */
export function installTaskQueue(installId: string): string {
  return `aivyx-${installId.slice(0, 8)}`;
}
