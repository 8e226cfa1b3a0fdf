/**
 * `sessionWorkflow`: orders the turns of one session. Channels submit messages with
 * update-with-start; turns run one at a time, in arrival order, as child `turnWorkflow`s whose
 * ids come from the message ids, so a redelivered message never runs a second turn.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  ParentClosePolicy,
  patched,
  setHandler,
  startChild,
  workflowInfo,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { TurnRequest } from '../core/channel.js';
import type { TurnOutcome } from '../core/outcomes.js';
import { describeIssues, sessionStateSchema, turnRequestSchema } from '../core/schemas.js';
import { carriedTools } from '../core/tool-offer.js';
import { admitInput } from './inputs.js';
import { DEFERRED_TOOLS } from './patches.js';
import { sessionStatusQuery, submitTurnUpdate, type SubmitTurnResult } from './messages.js';
import { turnWorkflow } from './turn-workflow.js';

/** State a session carries across continue-as-new. */
export interface SessionState {
  sessionId: string;
  /** Turn ids already accepted (bounded), for cheap duplicate answers. */
  seen: string[];
  turnsCompleted: number;
  /** Close after this long without a message (default {@link IDLE_TIMEOUT}); the next message re-opens it. */
  idleAfterMs?: number;
  /**
   * The deferred tools the session's turns loaded (core/tool-offer.ts): passed to each next turn, so its
   * offered prefix is the one the provider cached. Not authority: a turn offers only what it is granted.
   */
  loadedTools?: string[];
}

const SEEN_LIMIT = 500;
// An idle session closes; the next message starts a fresh run with the same id and no cost meanwhile.
const IDLE_TIMEOUT = '24 hours';

/** The session workflow. */
export async function sessionWorkflow(input: SessionState): Promise<void> {
  const state: SessionState = await admitInput(sessionStateSchema, input, 'session state');
  const seen = new Set(state.seen);
  const queue: TurnRequest[] = [];
  const started = new Set<string>();
  let running: string | null = null;
  let turnsCompleted = state.turnsCompleted;
  let loadedTools = state.loadedTools ?? [];

  setHandler(
    submitTurnUpdate,
    async (req): Promise<SubmitTurnResult> => {
      if (seen.has(req.turnId)) return { turnWorkflowId: req.turnId, duplicate: true };
      seen.add(req.turnId);
      queue.push(req);
      // Answer once the turn exists, so the caller can await its result by id.
      await condition(() => started.has(req.turnId));
      return { turnWorkflowId: req.turnId, duplicate: false };
    },
    {
      description: 'Queue a message as the next turn of this session (channels use update-with-start).',
      validator: (req) => {
        const parsed = turnRequestSchema.safeParse(req);
        if (!parsed.success) throw new Error(`turn request refused: malformed (${describeIssues(parsed.error)})`);
        if (req.message.sessionId !== state.sessionId)
          throw new Error(`message is for session ${req.message.sessionId}, not ${state.sessionId}`);
      },
    },
  );
  setHandler(sessionStatusQuery, () => ({ sessionId: state.sessionId, running, queued: queue.map((q) => q.turnId), turnsCompleted }), {
    description: 'Current turn, queued turns and count of completed turns.',
  });

  for (;;) {
    const gotWork = await condition(() => queue.length > 0, state.idleAfterMs ?? IDLE_TIMEOUT);
    if (!gotWork) break;
    const req = queue.shift();
    if (!req) continue;
    running = req.turnId;
    // The turn records its exchange in the sealed `sessions` domain; the next turn's LLM step loads it.
    const carried = patched(DEFERRED_TOOLS) ? { loadedTools } : undefined;
    const ended = await runTurn(req, started, carried);
    // A turn that loaded nothing (or failed) keeps what the session had.
    if (ended?.loadedTools) loadedTools = carriedTools({ loadedTools: ended.loadedTools });
    running = null;
    turnsCompleted++;
    // Continue-as-new only with an empty queue: queued submitters are waiting for their turn to start here.
    if (queue.length === 0 && (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2000)) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof sessionWorkflow>({
        sessionId: state.sessionId,
        seen: [...seen].slice(-SEEN_LIMIT),
        turnsCompleted,
        ...(state.idleAfterMs === undefined ? {} : { idleAfterMs: state.idleAfterMs }),
        ...(loadedTools.length > 0 ? { loadedTools } : {}),
      });
    }
  }
  await condition(allHandlersFinished);
}

/** Starts one turn as a child and waits for its outcome; a turn id that already ran is not run again. */
async function runTurn(
  req: TurnRequest,
  started: Set<string>,
  carried: { loadedTools: string[] } | undefined,
): Promise<TurnOutcome | undefined> {
  try {
    const child = await startChild(turnWorkflow, {
      workflowId: req.turnId,
      args: carried ? [req, carried] : [req],
      // The turn outlives a session continue-as-new or close; its id is its message: never reuse it.
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      staticSummary: `Turn ${req.turnId} on ${req.channel.name} (${req.channel.trustTier})`,
    });
    started.add(req.turnId);
    return await child.result();
  } catch {
    // WorkflowExecutionAlreadyStartedError: a redelivered message whose turn ran before; not run again.
    // Anything else is a failed turn, which has already written TurnEnded and told its channel.
    started.add(req.turnId);
    return undefined;
  }
}
