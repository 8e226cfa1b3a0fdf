/**
 * The in-process bridge every local channel uses: submit a message, relay its stream events as
 * they arrive, and resolve with the outcome. The stream is best effort; the outcome is not.
 */
import type { ChannelFacts, ReplyRoute } from '../core/channel.js';
import { AivyxError } from '../core/errors.js';
import type { Message } from '../core/message.js';
import type { TurnOutcome } from '../core/outcomes.js';
import type { ChannelEvent } from '../infra/stream-hub.js';
import type { StreamBus } from '../infra/stream-bus.js';
import { isTemporalUnreachable, isWorkflowNotFound } from '../infra/temporal/client-errors.js';
import type { AuditPort } from '../activities/ports.js';
import type { SessionClearPort as SessionHistoryClear } from '../infra/session-history.js';
import type { AttachmentForgetting } from '../infra/attachments.js';
import { sessionWorkflowId } from '../workflows/turn-ids.js';
import { SESSION_CLEARED_TEXT, type GatewayTurn, type LocalTurnPort, type SessionSummary } from './ports.js';
import { awaitTurnOutcome, buildTurnRequest, cancelTurn, submitTurn, type SessionOptions, type TurnClientDeps } from './turn-client.js';

// A turn goes on streaming while Temporal does not answer about it: its stream is kept open that long
// at most, asking for the outcome again every second.
const LISTEN_THROUGH_OUTAGE_MS = 10 * 60_000;
const ASK_AGAIN_MS = 1_000;
/** The start of a turn id as a visibility query may quote it (turn ids are slugs: no quotes, no spaces). */
const TURN_PREFIX = /^turn\/[A-Za-z0-9._@%/-]{1,300}$/;

/** "No such workflow" as `NotFound` naming the turn; anything else unchanged. */
function turnError(turnWorkflowId: string, err: unknown): unknown {
  if (!isWorkflowNotFound(err)) return err;
  return new AivyxError('NotFound', `no turn ${turnWorkflowId}`, {
    hint: 'turn ids look like turn/cli/<uuid>; aivyx chat prints one when a turn is accepted',
    detail: { turnId: turnWorkflowId },
    cause: err,
  });
}

/** What `/clear` needs: the sessions' history (the worker's, in the same database), their attachments and the audit log. */
export interface SessionClearing {
  history: SessionHistoryClear;
  attachments?: Pick<AttachmentForgetting, 'forgetSession'>;
  audit: AuditPort;
}

/** Submits turns and relays their events to a listener: every channel's turn port. */
export class TurnGateway implements LocalTurnPort {
  constructor(private readonly deps: TurnClientDeps & { hub: StreamBus; sessions?: SessionClearing }) {}

  /**
   * `/clear` on any channel: deletes the session's history, so its next turn's model sees no earlier
   * exchange and no earlier taint (docs/SECURITY.md), and the files its turns attached (that channel's
   * session's only); memory stays. A turn still running records its
   * exchange when it ends, with its own label. Audited as `SessionCleared` once per `eventId`.
   */
  async clearSession(channel: ChannelFacts, eventId: string): Promise<{ text: string }> {
    const sessions = this.deps.sessions;
    if (!sessions) throw new AivyxError('Config', 'this gateway cannot clear conversations', { hint: 'run it under aivyx up' });
    const session = sessionWorkflowId(channel.name, channel.sessionId);
    await sessions.history.clear(session);
    await sessions.attachments?.forgetSession(channel.name, channel.sessionId);
    await sessions.audit.append(`gateway/session-cleared/${channel.name}/${eventId}`, {
      type: 'SessionCleared',
      turnId: session,
      sessionId: channel.sessionId,
      channel: channel.platform,
      channelName: channel.name,
      clearedBy: channel.sender,
      trustTier: channel.trustTier,
    });
    return { text: SESSION_CLEARED_TEXT };
  }

  /**
   * The sessions that are open (Running): each closes itself after a day without a message, and the
   * next message re-opens it with its history, so this is the conversations in use, not all of them.
   */
  async sessions(limit = 100): Promise<SessionSummary[]> {
    const out: SessionSummary[] = [];
    const query = "WorkflowType = 'sessionWorkflow' AND ExecutionStatus = 'Running'";
    for await (const wf of this.deps.client.workflow.list({ query, pageSize: Math.min(limit, 100) })) {
      out.push({ sessionWorkflowId: wf.workflowId, startTime: wf.startTime.toISOString() });
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Turn ids that start with `prefix`, newest first (at most `limit`): what a short turn id may mean
   * (`aivyx chat --follow 849b32b3`). Visibility: a turn is listed within a second or so of starting.
   */
  async turnsStartingWith(prefix: string, limit = 10): Promise<string[]> {
    if (!TURN_PREFIX.test(prefix))
      throw new AivyxError('Config', `"${prefix}" is not the start of a turn id`, { hint: 'turn ids look like turn/cli/<uuid>' });
    const query = `WorkflowType = 'turnWorkflow' AND WorkflowId STARTS_WITH '${prefix}'`;
    const out: string[] = [];
    for await (const wf of this.deps.client.workflow.list({ query, pageSize: limit })) {
      out.push(wf.workflowId);
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Starts a turn for `message`; `onEvent` hears stream events until the outcome. With a
   * `replyRoute` the turn itself delivers the final reply through the channel's deliverer; `session`
   * sets how a session this message opens behaves (a one-shot message's closes when its turn ends).
   */
  async start(
    channel: ChannelFacts,
    message: Message,
    onEvent: (e: ChannelEvent) => void,
    replyRoute?: ReplyRoute,
    session?: SessionOptions,
  ): Promise<GatewayTurn> {
    const request = buildTurnRequest(channel, message, replyRoute);
    // Subscribe before submitting so the first streamed words are not missed.
    const stop = this.deps.hub.subscribe(request.turnId, (e) => {
      if (e.type !== 'final') onEvent(e);
    });
    try {
      const submitted = await submitTurn(this.deps, request, session);
      const outcome = this.listenUntilEnded(submitted.turnWorkflowId, stop);
      return { ...submitted, outcome };
    } catch (err) {
      stop();
      throw err;
    }
  }

  /**
   * Re-attaches to a turn started earlier (by this or another process): `onEvent` hears what it
   * streams from now on. Throws `NotFound` when there is no such turn.
   */
  async follow(turnWorkflowId: string, onEvent: (e: ChannelEvent) => void): Promise<{ status: string; outcome: Promise<TurnOutcome> }> {
    const stop = this.deps.hub.subscribe(turnWorkflowId, (e) => {
      if (e.type !== 'final') onEvent(e);
    });
    try {
      const described = await this.deps.client.workflow.getHandle(turnWorkflowId).describe();
      return { status: described.status.name, outcome: this.listenUntilEnded(turnWorkflowId, stop) };
    } catch (err) {
      stop();
      throw turnError(turnWorkflowId, err);
    }
  }

  /**
   * The turn's outcome; `stop` ends the listening once the turn has ended. A wait that Temporal did
   * not answer (unreachable, or too slow while the machine is loaded) rejects for the caller to retry
   * as it sees fit, but does not end the listening: the turn's steps run on the workers meanwhile, and
   * their words would be lost to a channel that asks again (the REST channel does, `finish` in rest-server.ts).
   */
  private listenUntilEnded(turnWorkflowId: string, stop: () => void): Promise<TurnOutcome> {
    const outcome = this.outcome(turnWorkflowId);
    void outcome.then(stop, async (err: unknown) => {
      for (let end = Date.now() + LISTEN_THROUGH_OUTAGE_MS; isTemporalUnreachable(err) && Date.now() < end;) {
        await new Promise((r) => setTimeout(r, ASK_AGAIN_MS).unref());
        err = await this.outcome(turnWorkflowId).then(
          () => undefined,
          (e: unknown) => e,
        );
      }
      stop();
    });
    return outcome;
  }

  /** A turn's outcome, once it has one (also for a turn that already ended). */
  outcome(turnWorkflowId: string): Promise<TurnOutcome> {
    return awaitTurnOutcome(this.deps.client, turnWorkflowId);
  }

  /** Cancels a running turn. */
  async cancel(turnWorkflowId: string): Promise<void> {
    await cancelTurn(this.deps.client, turnWorkflowId).catch((err: unknown) => {
      throw turnError(turnWorkflowId, err);
    });
  }
}
