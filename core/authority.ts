/**
 * Authority at the Temporal boundary (DESIGN.md D5). Anyone who reaches the Temporal frontend can
 * start any workflow with any input, send any Update or Signal and complete any pending activity,
 * so an input that confers authority carries a *proof*: an HMAC made by the component that
 * authenticated it, over a purpose, the workflow id it may be used under, and a canonical body.
 * The worker recomputes it in an activity before the input has any effect.
 *
 * This file is the workflow-safe half: the proof shape and the exact bodies each purpose covers,
 * so the signer (a channel, the REST gateway, the worker) and the verifier build the same bytes.
 */
import { canonicalJson, inputHash, sha256Hex, textHash } from './canonical-json.js';
import type { ChannelFacts, Delegation, OneShotGrant, ReplyRoute } from './channel.js';
import type { SpendBudget } from './spend.js';
import type { Message } from './message.js';
import type { ToolCall } from './tools.js';

/** What a proof may authorize. A proof for one purpose never verifies for another. */
export type AuthorityPurpose =
  /** A turn request from a channel adapter (or a mission's step, attested by the worker). */
  | 'turn'
  /** A mission definition from the gateway that authenticated its creator (or a confirmation, from the worker). */
  | 'mission'
  /** A recurring mission's template, bound to its schedule id, from the gateway that authenticated its creator. */
  | 'mission-schedule'
  /** The hand-over of a verified mission run to the run it continues as new. */
  | 'mission-continue'
  /** An inbound event (an e-mail, a Telegram message) for one mission's wait, from the adapter that authenticated its sender. */
  | 'mission-event'
  /** One person's decision on one gate. */
  | 'gate-decision'
  /** A tool call the worker's own LLM step produced for one turn run and step. */
  | 'tool-call'
  /** A tool result the worker's own `runTool` produced (what the audit records as the call's outcome). */
  | 'tool-result';

/** Every purpose, once (the proof schema and the attestor's check both use it). */
export const AUTHORITY_PURPOSES = [
  'turn',
  'mission',
  'mission-schedule',
  'mission-continue',
  'mission-event',
  'gate-decision',
  'tool-call',
  'tool-result',
] as const satisfies readonly AuthorityPurpose[];

/** A MAC over `{ v, keyId, purpose, boundTo, issuedAt, expiresAt?, body }` (RFC 8785 canonical JSON). */
export interface AuthorityProof {
  /** Format version. */
  v: 1;
  /** Which authority key made it. */
  keyId: string;
  purpose: AuthorityPurpose;
  /** The workflow id the input may be used under (a copy under another id fails). */
  boundTo: string;
  /** Epoch ms when it was made. */
  issuedAt: number;
  /** Epoch ms after which it is refused (decisions); none for inputs a queue may hold for long. */
  expiresAt?: number;
  /** hex HMAC-SHA256 */
  mac: string;
}

/** A verdict on a proof: why it fails, in words an operator can act on. */
export type ProofVerdict = { ok: true } | { ok: false; reason: string };

/** The parts of a turn request a turn proof covers (everything that decides what the turn may do). */
export function turnProofBody(req: {
  turnId: string;
  message: Message;
  channel: ChannelFacts;
  oneShotGrant?: OneShotGrant;
  capabilityLimit?: string[];
  replyRoute?: ReplyRoute;
  resumeFrom?: string;
  delegatedBy?: Delegation;
  spendLimit?: SpendBudget;
}): Record<string, unknown> {
  return {
    turnId: req.turnId,
    message: req.message,
    channel: req.channel,
    ...(req.oneShotGrant ? { oneShotGrant: req.oneShotGrant } : {}),
    ...(req.capabilityLimit ? { capabilityLimit: req.capabilityLimit } : {}),
    ...(req.replyRoute ? { replyRoute: req.replyRoute } : {}),
    ...(req.resumeFrom ? { resumeFrom: req.resumeFrom } : {}),
    ...(req.delegatedBy ? { delegatedBy: req.delegatedBy } : {}),
    ...(req.spendLimit ? { spendLimit: req.spendLimit } : {}),
  };
}

/** SHA-256 of a turn request's proof body: what a verified turn's claim keeps to recognise its request. */
export function turnRequestHash(req: Parameters<typeof turnProofBody>[0]): string {
  return sha256Hex(canonicalJson(turnProofBody(req)));
}

/** A gate decision as its proof covers it. `nonce` makes every decision distinct. */
export interface GateDecisionBody {
  missionId: string;
  gateId: string;
  kind: 'approve' | 'deny';
  approver: { identity: string; channel: string; trustTier: string };
  /** SHA-256 of the reason text when one was given (the text itself travels beside the proof). */
  reasonHash?: string;
  nonce: string;
}

/** The body of a gate decision's proof, from the decision as the approver's channel sends it. */
export function gateDecisionBody(
  missionId: string,
  kind: 'approve' | 'deny',
  req: { gateId: string; approver: GateDecisionBody['approver']; reason?: string; nonce: string },
): GateDecisionBody {
  return {
    missionId,
    gateId: req.gateId,
    kind,
    approver: { identity: req.approver.identity, channel: req.approver.channel, trustTier: req.approver.trustTier },
    ...(req.reason ? { reasonHash: textHash(req.reason) } : {}),
    nonce: req.nonce,
  };
}

/** The body of a tool-call proof: one call of one step of one run of a turn. */
export interface ToolCallProofBody {
  runId: string;
  step: number;
  callId: string;
  tool: string;
  inputHash: string;
}

/** The body of the proof that one call came from this run's step. */
export function toolCallProofBody(runId: string, step: number, call: ToolCall): ToolCallProofBody {
  return { runId, step, callId: call.callId, tool: call.tool, inputHash: inputHash(call.input) };
}

/** The facts of one tool call that its row, its `ToolCall` entry and its receipt carry. */
export interface ToolCallFacts {
  /** workflow id / run id / activity id of the runTool activity: the row key and the audit key. */
  idemKey: string;
  turnId: string;
  callId: string;
  tool: string;
  scope: string;
  inputHash: string;
  /** The call was made after untrusted content: where it came from (core/taint.ts). */
  taintedBy?: string[];
  /** The call's result is untrusted: its label (activities/taint-labels.ts). */
  untrustedOutput?: string;
  /** The call's untrusted result is held as this value (core/values.ts): the model saw only its handle, so it taints nothing. */
  heldAs?: string;
}

/** The body of a tool-result receipt: the call as `runTool` ran it, and the outcome it recorded. */
export interface ToolResultProofBody {
  facts: ToolCallFacts;
  outcome: string;
}

/** The body of a continuation proof: which verified run hands over to its continue-as-new run. */
export interface MissionContinuationBody {
  fromRunId: string;
  definitionHash: string;
  carriedHash: string;
}

/** The body of the proof that verified run `fromRunId` of a definition hands over `carried` to the run it continues as. */
export function continuationBody(fromRunId: string, definitionHash: string, carried: unknown): MissionContinuationBody {
  return { fromRunId, definitionHash, carriedHash: inputHash(carried ?? null) };
}

/** Why an input was refused at the boundary, as the audit log records it (never the input itself). */
export function describeProofFailure(what: string, verdict: Extract<ProofVerdict, { ok: false }>): string {
  return `${what} refused: ${verdict.reason}`;
}

/** The body of a mission-event proof: one event, as the adapter authenticated it, for one wait of the mission. */
export interface MissionEventProofBody {
  waitKey: string;
  eventId: string;
  facts: object;
}
