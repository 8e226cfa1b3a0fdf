/** `aivyx chat`: the CLI channel (Trusted). A REPL, one message with `-m`, or `--follow` a turn that outlived its client. */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { AivyxError, describeError } from '../../core/errors.js';
import { isUnavailable } from '../../infra/health.js';
import { sanitizeAttachmentName } from '../../core/attachments.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { describeSpend } from '../../core/spend.js';
import type { ListedAttachment } from '../rest/rest-attachments.js';
import { saveAttachments } from './attachments.js';
import { outcomeReplyText, toolSummaryFailed, toolSummaryText } from '../outcome-text.js';
import { CLEAR_COMMAND } from '../ports.js';
import { watchInbox } from './inbox-watch.js';
import { createRestartDedupe } from './restart-dedupe.js';
import { auditedToolCounts, type ToolCounts } from './tool-counts.js';
import { restJson, sendMessage, turnEvents, type RestTarget, type SseEvent } from './rest-client.js';
import {
  answerOf,
  APPROVE_PROMPT,
  askInlineWith,
  decideInline,
  gateDetails,
  gateOfTurn,
  showGate,
  type InlineGate,
} from './inline-approval.js';

/** Exit status for each outcome: 0 only for Completed. */
export const OUTCOME_EXIT_CODES: Record<TurnOutcome['status'], number> = {
  Completed: 0,
  Failed: 1,
  Escalated: 3,
  TimedOut: 4,
  Cancelled: 5,
};

/** How many tools ran, how many of those failed, and how many calls were refused before running, in words. */
function toolsRan(ran: number, { failed = 0, refused = 0 }: Partial<ToolCounts>): string {
  const n = Math.max(ran, failed);
  const fails = failed > 0 ? ` (${failed === n ? (n === 1 ? 'it' : 'all') : failed} failed)` : '';
  const refusals = refused > 0 ? `, ${refused} call${refused === 1 ? '' : 's'} refused` : '';
  return `${n === 0 ? 'no tool' : n === 1 ? '1 tool' : `${n} tools`} ran${fails}${refusals}`;
}

/** One line describing how a turn ended; `counts`: what its tool calls came to besides success (tool-counts.ts). */
export function outcomeLine(o: TurnOutcome, counts: Partial<ToolCounts> = {}): string {
  switch (o.status) {
    case 'Completed':
      return `[Completed · ${toolsRan(o.toolCallsMade, counts)} · ${o.durationMs} ms${o.spend ? ` · ${describeSpend(o.spend)}` : ''}]`;
    case 'Escalated':
      return `[Escalated: ${o.pendingTool} needs approval — ${o.reason}]`;
    case 'TimedOut':
      if (o.budget) return `[TimedOut: over the ${o.budget.limit} budget — ${o.budget.reason}]`;
      return `[TimedOut after ${o.elapsedMs} ms · ${toolsRan(o.toolCallsMade, counts)}]`;
    case 'Cancelled':
      return `[Cancelled · ${toolsRan(o.toolCallsMade, counts)}]`;
    case 'Failed':
      return `[Failed: ${describeError(o.error)}]`;
  }
}

/** Where a turn's text (stdout) and progress lines (stderr) go. */
export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Exit status of `chat -m` when it lost `aivyx up` while its turn ran (the turn goes on). */
export const DETACHED_EXIT_CODE = 6;

/**
 * The stream of an accepted turn broke (`aivyx up` died or stopped): the turn goes on in Temporal
 * without this client, and `aivyx chat --follow <turnId>` shows how it ends.
 */
export class TurnDetached extends Error {
  constructor(
    readonly turnId: string,
    readonly reason: string,
  ) {
    super(`lost aivyx up while turn ${turnId} was running (${reason})`);
  }
}

/** Why a stream broke, in a few words. */
function reasonOf(err: unknown): string {
  const e = err as { message?: string; cause?: { message?: string } };
  return e.cause?.message ?? e.message ?? String(err);
}

/**
 * Shows one turn's events as they arrive; resolves with its outcome, or throws `TurnDetached` when the stream
 * breaks after the turn was accepted. `target`: where the audit log says what its tool calls came to.
 */
async function showTurn(
  events: AsyncIterable<SseEvent>,
  io: Io,
  target: RestTarget,
  onTurn?: (turnId: string) => void,
): Promise<TurnOutcome> {
  let outcome: TurnOutcome | undefined;
  let turnId: string | undefined;
  let detachedBy: string | undefined;
  let streamed = false;
  let failedTools = 0;
  const dedupe = createRestartDedupe();
  try {
    for await (const ev of events) {
      const data = ev.data as Record<string, unknown>;
      switch (ev.event) {
        case 'turn':
          turnId = String(data.turnWorkflowId);
          // First thing on stderr: should this client die, the turn id is what --follow needs.
          io.err(
            `· turn ${turnId}${data.duplicate ? ' (already submitted: showing how it ends)' : ''}${data.followed ? ` (${String(data.status).toLowerCase()})` : ''}\n`,
          );
          onTurn?.(turnId);
          break;
        case 'text': {
          const { show, diverged } = dedupe.text(String(data.text));
          if (diverged) io.err(`\n· (the restarted step says something different:)\n`);
          io.out(show);
          streamed ||= show !== '';
          break;
        }
        case 'status':
          io.err(`${streamed ? '\n' : ''}· ${String(data.text)}\n`);
          break;
        case 'tool_started':
          dedupe.nextStep();
          io.err(`${streamed ? '\n' : ''}· running ${String(data.tool)}…\n`);
          streamed = false;
          break;
        case 'tool_finished':
          if (toolSummaryFailed(String(data.summary))) failedTools++;
          io.err(`· ${String(data.tool)} → ${toolSummaryText(String(data.summary))}\n`);
          break;
        case 'attachment':
          // A name from the server reaches the terminal only as safe characters (no escape sequences).
          io.err(
            `· attached ${sanitizeAttachmentName(String((data.attachment as { name?: unknown } | undefined)?.name), 'application/octet-stream')}\n`,
          );
          break;
        case 'step_restarted':
          // The retried step streams its text again: show only what it adds (see restart-dedupe.ts).
          dedupe.restarted();
          io.err(`\n· (the model step restarted after a worker failure)\n`);
          break;
        case 'outcome':
          outcome = data as unknown as TurnOutcome;
          break;
        case 'error':
          // The server could not see the turn to its end (e.g. Temporal stayed down): the turn itself goes on.
          detachedBy = describeError(data as never);
          break;
      }
    }
  } catch (err) {
    if (turnId === undefined) throw err;
    detachedBy = reasonOf(err);
  }
  if (streamed) io.out('\n');
  if (!outcome) {
    if (turnId !== undefined) throw new TurnDetached(turnId, detachedBy ?? 'the stream ended without an outcome');
    throw new AivyxError('Channel', 'the REST channel closed the stream before accepting the turn');
  }
  if (outcome.status === 'Completed' && !streamed) io.out(`${outcome.finalMessage}\n`);
  const files = (outcome as { attachments?: ListedAttachment[] }).attachments;
  if (outcome.status === 'Completed' && files?.length && target.downloads) {
    for (const path of await saveAttachments(target, files, target.downloads)) io.err(`· attachment saved: ${path}\n`);
  }
  const counts = turnId === undefined ? undefined : await auditedToolCounts(target, turnId);
  io.err(`${outcomeLine(outcome, counts ?? { failed: failedTools })}\n`);
  return outcome;
}

/**
 * Runs one turn against the REST channel, streaming to `io`; `onTurn` learns the turn id as soon as it is
 * accepted (for cancel). `oneShot`: no conversation follows, so a session this opens closes when the turn ends.
 */
export function chatTurn(
  target: RestTarget,
  text: string,
  sessionId: string,
  io: Io,
  onTurn?: (turnId: string) => void,
  oneShot = false,
): Promise<TurnOutcome> {
  return showTurn(sendMessage(target, { text, sessionId, ...(oneShot ? { oneShot } : {}) }), io, target, onTurn);
}

/**
 * `/clear`: the session's context starts empty (its history, and the taint that history carried, so
 * the next turn asks for nothing an earlier untrusted read made it ask for); memory stays.
 */
export async function clearConversation(target: RestTarget, sessionId: string, io: Io): Promise<void> {
  const r = (await restJson(target, 'POST', `/v1/sessions/${encodeURIComponent(sessionId)}/clear`, { channel: 'cli' })) as { text: string };
  io.out(`${r.text}\n`);
}

/** Re-attaches to a turn by id and shows the rest of it (`aivyx chat --follow`). */
export function followTurn(target: RestTarget, turnId: string, io: Io, onTurn?: (turnId: string) => void): Promise<TurnOutcome> {
  return showTurn(turnEvents(target, turnId), io, target, onTurn);
}

/** `chat -m` at a terminal: the inline approval of an escalated turn, its approved re-run shown like any turn. */
export function askInline(target: RestTarget, turnId: string, io: Io): Promise<TurnOutcome | undefined> {
  return askInlineWith(target, turnId, io, (id) => followTurn(target, id, io));
}

/** What to tell a person whose client lost a running turn. */
export function detachedLine(e: TurnDetached): string {
  return `aivyx: lost aivyx up while turn ${e.turnId} was running (${e.reason}). The turn goes on without this terminal; once aivyx up is back, see how it ends with:\n  aivyx chat --follow ${e.turnId}\n`;
}

/** True when `err` means aivyx up (or its Temporal) could not be reached: a REPL waiting to re-attach keeps trying. */
function unreachable(err: unknown): boolean {
  return err instanceof TurnDetached || isUnavailable(err);
}

/**
 * The interactive REPL: Ctrl-C cancels the running turn; /clear starts the conversation afresh;
 * Ctrl-C twice at the prompt, Ctrl-D or /exit quits. `target()` finds aivyx up again (it may come
 * back on another port); when it goes away mid-turn, the REPL waits for it and re-attaches to that turn.
 */
export async function chatRepl(target: () => RestTarget, sessionId = `cli-${randomUUID()}`, continued = false): Promise<void> {
  const io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'you › ' });
  let current: string | undefined;
  let busy = false;
  let waiting: AbortController | undefined;
  let lastSigint = 0;
  // A terminal's Ctrl-C reaches readline as 'SIGINT'; a real signal (kill -INT, a non-TTY stdin)
  // reaches the process. Both mean the same thing here: cancel the turn, not the process.
  const onSigint = () => {
    if (waiting) {
      waiting.abort();
      return;
    }
    if (busy) {
      if (current) {
        io.err('\n· cancelling this turn (the running tool finishes first)…\n');
        void restJson(target(), 'POST', `/v1/turns/${encodeURIComponent(current)}/cancel`).catch((e: unknown) =>
          io.err(`· cancel failed: ${String(e)}\n`),
        );
      }
      return;
    }
    if (Date.now() - lastSigint < 2000) rl.close();
    lastSigint = Date.now();
    io.err('\n(Ctrl-C again or Ctrl-D to quit)\n');
    rl.prompt();
  };

  /** Waits for aivyx up to come back, then shows the rest of `turnId`. */
  const reattach = async (detached: TurnDetached): Promise<void> => {
    io.err(`· lost aivyx up (${detached.reason}); turn ${detached.turnId} goes on — waiting to re-attach (Ctrl-C stops waiting)\n`);
    waiting = new AbortController();
    const stop = waiting.signal;
    try {
      while (!stop.aborted) {
        await delay(1_000, undefined, { signal: stop }).catch(() => undefined);
        if (stop.aborted) break;
        try {
          await followTurn(target(), detached.turnId, io);
          return;
        } catch (e) {
          if (!unreachable(e)) {
            io.err(`${e instanceof Error ? e.message : String(e)}\n`);
            return;
          }
        }
      }
      io.err(`· stopped waiting; later: aivyx chat --follow ${detached.turnId}\n`);
    } finally {
      waiting = undefined;
    }
  };

  const problem = (e: unknown) =>
    io.err(`${e instanceof AivyxError ? describeError(e.toData()) : e instanceof Error ? e.message : String(e)}\n`);
  // A gate the owner is being asked about: the next line answers it (see inline-approval.ts).
  let asking: InlineGate | undefined;
  const ask = (gate: InlineGate) => {
    asking = gate;
    rl.setPrompt(APPROVE_PROMPT);
  };
  const stopAsking = () => {
    asking = undefined;
    rl.setPrompt('you › ');
  };

  rl.on('SIGINT', onSigint);
  process.on('SIGINT', onSigint);
  io.err(
    `${continued ? `continuing session ${sessionId} (aivyx chat --new starts a new one)` : `session ${sessionId}`} — type a message; Ctrl-C cancels a running turn; /clear starts afresh\n`,
  );
  // Notices for the owner (a reminder, a mission's report) show up as they arrive; `aivyx inbox` keeps them.
  const stopWatching = watchInbox(target, (r) => {
    io.out(`\n· inbox ${r.id} (${r.channel}, ${r.turnId}): ${outcomeReplyText(r.outcome, r.turnId)}\n`);
    if (!busy) rl.prompt(true);
  });
  rl.prompt();
  for await (const line of rl) {
    const text = line.trim();
    if (asking) {
      const gate = asking;
      const answer = answerOf(text);
      if (answer === 'details') io.err(gateDetails(gate));
      else {
        stopAsking();
        busy = true;
        try {
          await decideInline(target(), gate, answer, io, (id) => followTurn(target(), id, io, (t) => (current = t)));
        } catch (e) {
          problem(e);
        }
        busy = false;
        current = undefined;
      }
      rl.prompt();
      continue;
    }
    if (text === '/exit' || text === '/quit') break;
    if (text === CLEAR_COMMAND) {
      await clearConversation(target(), sessionId, io).catch(problem);
      rl.prompt();
      continue;
    }
    if (text) {
      busy = true;
      try {
        let turnId: string | undefined;
        const outcome = await chatTurn(target(), text, sessionId, io, (id) => (current = turnId = id));
        if (outcome.status === 'Escalated' && turnId) {
          const gate = await gateOfTurn(target(), turnId);
          if (gate) {
            showGate(gate, io);
            ask(gate);
          }
        }
      } catch (e) {
        if (e instanceof TurnDetached) await reattach(e);
        else problem(e);
      }
      busy = false;
      current = undefined;
    }
    rl.prompt();
  }
  stopWatching();
  process.off('SIGINT', onSigint);
  rl.close();
}
