/**
 * Approvals and commands on Matrix. A request message carries no token in its text: the token sits
 * in sealed state under the request's event id, bound to the one person it was sent to. A reaction
 * (✅ / ❌) on that event, in that room, decides — when the reacting user id (set by the homeserver,
 * never a display name) is the token's person. `!approve <gate>`, `!deny <gate> [reason]`,
 * `!missions`, `!cancel` and `!help` are the text side; the mission's Update validator checks every
 * decision again (identity, tier, whether the gate is still open).
 */
import { listOwnMissions } from '../../activities/owned-missions.js';
import { AivyxError } from '../../core/errors.js';
import type { DomainHandle } from '../../infra/storage/index.js';
import { checkApprovalToken } from '../kit/approve-by-token.js';
import type { ChatMissionPort, GateTokenPort, TurnCancelPort } from '../ports.js';
import type { MatrixClient, MatrixEvent, Relation } from './client.js';
import { APPROVE_KEYS, DENY_KEYS, utc } from './render.js';
import { requestKey, type ApprovalRequest } from './state.js';
import type { MatrixTier } from './trust.js';

const HELP = [
  'I am your aivyx assistant. Write to me here.',
  '!approve <gate id>, !deny <gate id> [reason] — answer an approval request (or react ✅ / ❌ to it)',
  '!missions — your missions',
  '!cancel — stop your running request in this room',
  '/clear (or !clear) — start a new conversation in this room',
  '!help — this text',
].join('\n');

/** What approvals and commands need from the adapter. */
export interface ApprovalDeps {
  client: MatrixClient;
  store: DomainHandle;
  missions?: ChatMissionPort;
  gateTokens?: GateTokenPort;
  gateway: TurnCancelPort;
  /** The sender's tier in `roomId` (from the homeserver's membership). */
  tierOf(roomId: string, sender: string): Promise<MatrixTier>;
  /** The turn of `sender` in `roomId` still running, if any (for `!cancel`). */
  runningTurn(roomId: string, sender: string): string | undefined;
  log(line: string): void;
}

/** A line to the room, in reply to `eventId`. */
type Say = (text: string) => Promise<void>;

/** Decides `gateId` as `sender`; a refusal is a line to show, never a throw. */
async function decide(
  missions: ChatMissionPort,
  kind: 'approve' | 'deny',
  gateId: string,
  sender: string,
  tier: MatrixTier,
  reason?: string,
): Promise<{ ok: boolean; line: string }> {
  try {
    await missions.decideAs(kind, gateId, { identity: sender, channel: 'matrix', trustTier: tier }, reason);
    return { ok: true, line: `${kind === 'approve' ? 'Approved' : 'Denied'} by ${sender} at ${utc(Date.now())}` };
  } catch (err) {
    if (!(err instanceof AivyxError)) return { ok: false, line: 'Could not reach the mission right now; nothing was decided.' };
    if (/already completed|not found/i.test(err.message)) return { ok: false, line: `Refused: gate ${gateId} is closed; nothing changed.` };
    return { ok: false, line: `Refused: ${err.message}` };
  }
}

export function createApprovals(deps: ApprovalDeps): {
  onReaction(roomId: string, ev: MatrixEvent, rel: Relation): Promise<void>;
  onCommand(roomId: string, ev: MatrixEvent, body: string): Promise<void>;
} {
  const say =
    (roomId: string, ev: MatrixEvent): Say =>
    async (text) => {
      await deps.client.sendText(roomId, text, `reply/${ev.event_id}`, ev.event_id);
    };

  /** A reaction on a request: its token must be the reacting user's, in the request's room. */
  async function onReaction(roomId: string, ev: MatrixEvent, rel: Relation): Promise<void> {
    const kind = APPROVE_KEYS.includes(rel.key ?? '') ? 'approve' : DENY_KEYS.includes(rel.key ?? '') ? 'deny' : undefined;
    if (!kind || !rel.event_id) return;
    const req = await deps.store.getJson<ApprovalRequest>(requestKey(rel.event_id));
    // Not a request of ours, or a relation pointing across rooms: nothing to decide.
    if (!req || req.roomId !== roomId || !deps.missions || !deps.gateTokens) return;
    const reply = say(roomId, ev);
    const v = await checkApprovalToken(deps.gateTokens, req.token, 'matrix', ev.sender);
    if (!v.ok) {
      if (v.why === 'someone-else')
        await deps.missions.rejectDecision({
          gateId: v.gateId,
          kind,
          approver: { identity: ev.sender, channel: 'matrix' },
          reason: 'a reaction on a request sent to someone else',
          eventId: ev.event_id,
        });
      const line = v.why === 'someone-else' ? 'this approval is for someone else' : v.reason;
      return reply(v.why === 'used' && v.used ? `Already decided (${v.used.decision} at ${utc(v.used.at)}).` : `Refused: ${line}.`);
    }
    const result = await decide(deps.missions, kind, v.gateId, ev.sender, await deps.tierOf(roomId, ev.sender));
    if (result.ok) {
      await deps.gateTokens.markUsed(req.token, kind);
      await deps.client
        .editText(roomId, rel.event_id, `${result.line}\nGate: ${v.gateId}`, `decided/${rel.event_id}`)
        .catch((err: unknown) => deps.log(`editing the request of ${v.gateId}: ${(err as Error).message}`));
    }
    await reply(result.line);
  }

  async function missionsList(roomId: string, sender: string): Promise<string> {
    if (!deps.missions) return 'Missions are not available here.';
    const tier = await deps.tierOf(roomId, sender);
    if (tier === 'Untrusted') return 'You have no missions here.';
    const mine = await listOwnMissions(
      deps.missions,
      { identity: sender, channel: 'matrix', trustTier: tier, local: false },
      { limit: 10 },
    );
    if (mine.length === 0) return 'You have no missions.';
    return ['Your missions:', ...mine.map((m) => `• ${m.goal.slice(0, 80)}\n  ${m.missionId} — ${m.state ?? m.status.toLowerCase()}`)].join(
      '\n',
    );
  }

  async function onCommand(roomId: string, ev: MatrixEvent, body: string): Promise<void> {
    const reply = say(roomId, ev);
    const [command, gateId, ...rest] = body.trim().split(/\s+/);
    switch (command) {
      case '!approve':
      case '!deny': {
        const kind = command === '!approve' ? 'approve' : 'deny';
        if (!deps.missions) return reply('There is nothing to approve here.');
        if (!gateId) return reply(`Usage: ${command} <gate id>`);
        const result = await decide(
          deps.missions,
          kind,
          gateId,
          ev.sender,
          await deps.tierOf(roomId, ev.sender),
          rest.join(' ') || undefined,
        );
        return reply(result.ok ? `${result.line} (gate ${gateId})` : result.line);
      }
      case '!missions':
        return reply(await missionsList(roomId, ev.sender).catch(() => 'Could not list your missions right now.'));
      case '!cancel': {
        const turn = deps.runningTurn(roomId, ev.sender);
        if (!turn) return reply('Nothing of yours to cancel here.');
        await deps.gateway.cancel(turn);
        return reply('Cancelling…');
      }
      default:
        return reply(HELP);
    }
  }

  return { onReaction, onCommand };
}
