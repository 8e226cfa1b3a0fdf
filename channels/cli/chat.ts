/** `aivyx chat`: the CLI channel (Trusted). A REPL, or one message with `-m`. */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { describeError } from '../../core/errors.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import { createRestartDedupe } from './restart-dedupe.js';
import { restJson, sendMessage, type RestTarget } from './rest-client.js';

/** Exit status for each outcome: 0 only for Completed. */
export const OUTCOME_EXIT_CODES: Record<TurnOutcome['status'], number> = { Completed: 0, Failed: 1, Escalated: 3, TimedOut: 4, Cancelled: 5 };

/** One line describing how a turn ended. */
export function outcomeLine(o: TurnOutcome): string {
  switch (o.status) {
    case 'Completed':
      return `[Completed · ${o.toolCallsMade} tool call(s) · ${o.durationMs} ms]`;
    case 'Escalated':
      return `[Escalated: ${o.pendingTool} needs approval — ${o.reason}]`;
    case 'TimedOut':
      return `[TimedOut after ${o.elapsedMs} ms · ${o.toolCallsMade} tool call(s)]`;
    case 'Cancelled':
      return `[Cancelled · ${o.toolCallsMade} tool call(s)]`;
    case 'Failed':
      return `[Failed: ${describeError(o.error)}]`;
  }
}

interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Runs one turn against the REST channel, streaming to `io`; `onTurn` learns the turn id (for cancel). */
export async function chatTurn(target: RestTarget, text: string, sessionId: string, io: Io, onTurn?: (turnId: string) => void): Promise<TurnOutcome> {
  let outcome: TurnOutcome | undefined;
  let streamed = false;
  const dedupe = createRestartDedupe();
  for await (const ev of sendMessage(target, { text, sessionId })) {
    const data = ev.data as Record<string, unknown>;
    switch (ev.event) {
      case 'turn':
        onTurn?.(String(data.turnWorkflowId));
        break;
      case 'text': {
        const { show, diverged } = dedupe.text(String(data.text));
        if (diverged) io.err(`\n· (the restarted step says something different:)\n`);
        io.out(show);
        streamed ||= show !== '';
        break;
      }
      case 'status':
        io.err(`· ${String(data.text)}\n`);
        break;
      case 'tool_started':
        dedupe.nextStep();
        io.err(`${streamed ? '\n' : ''}· running ${String(data.tool)}…\n`);
        streamed = false;
        break;
      case 'tool_finished':
        io.err(`· ${String(data.tool)} → ${String(data.summary)}\n`);
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
        outcome = { status: 'Failed', error: data as never, toolCallsMade: 0 };
        break;
    }
  }
  if (streamed) io.out('\n');
  if (!outcome) outcome = { status: 'Failed', error: { kind: 'Channel', message: 'the REST channel closed the stream without an outcome' }, toolCallsMade: 0 };
  if (outcome.status === 'Completed' && !streamed) io.out(`${outcome.finalMessage}\n`);
  io.err(`${outcomeLine(outcome)}\n`);
  return outcome;
}

/** The interactive REPL: Ctrl-C cancels the running turn; Ctrl-C twice at the prompt, Ctrl-D or /exit quits. */
export async function chatRepl(target: RestTarget, sessionId = `cli-${randomUUID()}`): Promise<void> {
  const io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) };
  const rl = createInterface({ input: process.stdin, output: process.stdout, prompt: 'you › ' });
  let current: string | undefined;
  let busy = false;
  let lastSigint = 0;
  // A terminal's Ctrl-C reaches readline as 'SIGINT'; a real signal (kill -INT, a non-TTY stdin)
  // reaches the process. Both mean the same thing here: cancel the turn, not the process.
  const onSigint = () => {
    if (busy) {
      if (current) {
        io.err('\n· cancelling this turn (the running tool finishes first)…\n');
        void restJson(target, 'POST', `/v1/turns/${encodeURIComponent(current)}/cancel`).catch((e: unknown) => io.err(`· cancel failed: ${String(e)}\n`));
      }
      return;
    }
    if (Date.now() - lastSigint < 2000) rl.close();
    lastSigint = Date.now();
    io.err('\n(Ctrl-C again or Ctrl-D to quit)\n');
    rl.prompt();
  };
  rl.on('SIGINT', onSigint);
  process.on('SIGINT', onSigint);
  io.err(`session ${sessionId} — type a message; Ctrl-C cancels a running turn\n`);
  rl.prompt();
  for await (const line of rl) {
    const text = line.trim();
    if (text === '/exit' || text === '/quit') break;
    if (text) {
      busy = true;
      try {
        await chatTurn(target, text, sessionId, io, (id) => (current = id));
      } catch (e) {
        io.err(`${e instanceof Error ? e.message : String(e)}\n`);
      }
      busy = false;
      current = undefined;
    }
    rl.prompt();
  }
  process.off('SIGINT', onSigint);
  rl.close();
}
