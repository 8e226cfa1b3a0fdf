/**
 * Approving where the owner is (issue "the everyday conversation"): when a REPL turn ends
 * `Escalated`, the REPL shows the exact call its gate holds and asks `approve? [y/N/details]`. The
 * answer is the owner's gate decision through the REST channel — the same signed path as
 * `aivyx mission approve` and every channel's buttons — and an approved call's re-run is followed in
 * the same terminal, so its result appears where the request was made.
 */
import { createInterface } from 'node:readline/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { AivyxError } from '../../core/errors.js';
import type { TurnOutcome } from '../../core/outcomes.js';
import type { MissionStatus } from '../../workflows/mission-messages.js';
import { confirmationMissionId, confirmationRerunTurnId } from '../../workflows/turn-ids.js';
import { gateLines } from './gate-commands.js';
import { restJson, type RestTarget } from './rest-client.js';

/** What the REPL prints and reads. */
export interface PromptIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** The question the REPL asks under a gate. */
export const APPROVE_PROMPT = 'approve? [y/N/details] ';

/** A gate the owner is being asked about. */
export interface InlineGate {
  missionId: string;
  gateId: string;
  /** The turn that runs the call once it is approved. */
  rerun: string;
  status: MissionStatus;
}

/** How long a gate may take to open after its turn's outcome (the gate opens before the outcome is sent; a slow server lags). */
const GATE_WAIT_MS = 15_000;
/** How long the approved re-run may take to start. */
const RERUN_WAIT_MS = 30_000;

/** The open gate of an escalated channel turn, once its confirmation mission shows it (undefined: none for the owner here). */
export async function gateOfTurn(target: RestTarget, turnId: string): Promise<InlineGate | undefined> {
  const missionId = confirmationMissionId(turnId);
  const rerun = confirmationRerunTurnId(turnId);
  const deadline = Date.now() + GATE_WAIT_MS;
  for (;;) {
    try {
      const status = (await restJson(target, 'GET', `/v1/missions/${encodeURIComponent(missionId)}`)) as MissionStatus;
      const gate = status.gate;
      if (gate?.state === 'open' && gate.approvers.some((a) => a.identity === 'local-user' && a.channel === 'cli'))
        return { missionId, gateId: gate.gateId, rerun, status };
    } catch (e) {
      if (!(e instanceof AivyxError) || e.kind !== 'NotFound') throw e;
    }
    if (Date.now() > deadline) return undefined;
    await delay(200);
  }
}

/** The gate as the owner sees it before answering: the exact call, why, who asked. */
export function showGate(gate: InlineGate, io: PromptIo): void {
  io.err(`· approval needed — this exact call will run if you approve:\n${gateLines(gate.status.gate!).join('\n')}\n`);
}

/** Everything known about the gate, for `details`. */
export function gateDetails(gate: InlineGate): string {
  return `${JSON.stringify({ missionId: gate.missionId, ...gate.status.gate }, null, 2)}\n`;
}

/** What an answer means: y/yes approve, details show more, anything else (the default) deny. */
export function answerOf(line: string): 'approve' | 'details' | 'deny' {
  const a = line.trim().toLowerCase();
  if (a === 'y' || a === 'yes') return 'approve';
  if (a === 'd' || a === 'details') return 'details';
  return 'deny';
}

/**
 * Decides the gate as the owner (local-user on cli) and, once approved, follows the call's re-run
 * (`follow`, e.g. the REPL's turn display) until it ends. Denied: nothing runs, and the REPL says so.
 */
export async function decideInline(
  target: RestTarget,
  gate: InlineGate,
  decision: 'approve' | 'deny',
  io: PromptIo,
  follow: (turnId: string) => Promise<TurnOutcome>,
): Promise<TurnOutcome | undefined> {
  await restJson(target, 'POST', `/v1/gates/${decision}`, {
    gateId: gate.gateId,
    missionId: gate.missionId,
    ...(decision === 'deny' ? { reason: 'denied at the prompt' } : {}),
  });
  if (decision === 'deny') {
    io.err('· denied: nothing ran\n');
    return undefined;
  }
  io.err('· approved; running it now\n');
  // The confirmation mission re-runs the message once with a one-shot grant for exactly this call.
  const rerun = gate.rerun;
  const deadline = Date.now() + RERUN_WAIT_MS;
  for (;;) {
    try {
      return await follow(rerun);
    } catch (e) {
      if (!(e instanceof AivyxError) || e.kind !== 'NotFound' || Date.now() > deadline) throw e;
      await delay(200);
    }
  }
}

/**
 * `chat -m` at a terminal: shows the gate, asks once (details first when asked for), decides, and
 * follows an approved re-run with `follow`. Resolves with the re-run's outcome, or undefined (denied, no gate).
 */
export async function askInlineWith(
  target: RestTarget,
  turnId: string,
  io: PromptIo,
  follow: (turnId: string) => Promise<TurnOutcome>,
): Promise<TurnOutcome | undefined> {
  const gate = await gateOfTurn(target, turnId);
  if (!gate) return undefined;
  showGate(gate, io);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (;;) {
      const answer = answerOf(await rl.question(APPROVE_PROMPT));
      if (answer === 'details') io.err(gateDetails(gate));
      else return await decideInline(target, gate, answer, io, follow);
    }
  } finally {
    rl.close();
  }
}
