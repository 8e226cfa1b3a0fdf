/**
 * Opening a turn (DESIGN.md D5): the only place a turn request's proof is checked. The request is
 * claimed for this workflow run (a copy replayed by another run finds it taken) with the effective
 * capability set, which `runTool` and `finalizeTurn` then read from the claim, never from their input.
 */
import { turnRequestHash } from '../../core/authority.js';
import { CapabilitySet, channelTrustTier, tierCeiling, type TrustTier } from '../../core/capability/index.js';
import type { TurnRequest } from '../../core/channel.js';
import { spendDay, type SpendBudget } from '../../core/spend.js';
import { tighterBudget } from '../../core/specialists.js';
import { mcpCeiling } from '../../core/tools/mcp-tools.js';
import { sessionWorkflowId } from '../../workflows/turn-ids.js';
import { bookkeepingKey, currentExecution } from '../execution.js';
import { errorData } from '../failure.js';
import { offeredToolIds } from '../llm/step-prompt.js';
import { historyLabels, messageLabel } from '../taint-labels.js';
import type { TurnContext } from './context.js';
import { checkDelegation, delegatedTaskLabel } from './delegation.js';
import { claimResume, openedResume, resumeRecordFor, runsAs } from './resume.js';
import { SESSION_HISTORY_LIMIT, type OpenedSpend, type OpenTurnResult, type TurnAuthority } from './types.js';

/** The activity that opens a turn. */
export function openTurnActivities({ deps, toolsById, places, mcpClasses }: TurnContext) {
  const agentCaps = CapabilitySet.from(deps.agent.capabilities);
  const budgets = deps.agent.spendBudgets ?? {};

  /** The budgets a turn of `sessionKey` opens with (a specialist's: the tighter turn budget); undefined when none is configured. */
  async function openedSpend(sessionKey: string, slice?: SpendBudget): Promise<OpenedSpend | undefined> {
    const day =
      budgets.sessionDay && deps.spend
        ? { budget: budgets.sessionDay, used: await deps.spend.dayTotal(sessionKey, spendDay(Date.now())) }
        : undefined;
    const turn = tighterBudget(budgets.turn, slice);
    if (!turn && !day) return undefined;
    return { ...(turn ? { turn } : {}), ...(day ? { day } : {}) };
  }

  /** Audits `TurnRejected` and returns the refusal the workflow ends the turn with. */
  async function reject(req: TurnRequest, workflowId: string, reason: string): Promise<OpenTurnResult> {
    await deps.audit.append(bookkeepingKey('opened'), {
      type: 'TurnRejected',
      // Indexed under the workflow it happened in (a copied request names another turn).
      turnId: workflowId,
      sessionId: String(req.channel?.sessionId ?? ''),
      channel: req.channel?.platform,
      channelName: String(req.channel?.name ?? ''),
      claimedTrustTier: String(req.channel?.trustTier),
      reason,
    });
    return {
      ok: false,
      error: {
        kind: 'CapabilityDenied',
        message: `turn refused: ${reason}`,
        hint: 'turns must come through a channel adapter that holds the attestation key',
        detail: { scope: 'channel.attestation', held: [] },
      },
    };
  }

  /** What the verified request may do: its tier, and the effective capabilities (or why it may not run). */
  function authorityOf(req: TurnRequest): { tier: Exclude<TrustTier, 'Kernel'>; effective: string[] } | { refused: string } {
    let tier: Exclude<TrustTier, 'Kernel'>;
    // A mission's capability set (attested with the request) attenuates the turn further.
    let limit: CapabilitySet | undefined;
    try {
      tier = channelTrustTier(req.channel.trustTier);
      if (req.capabilityLimit) limit = CapabilitySet.from(req.capabilityLimit);
    } catch (e) {
      return { refused: errorData(e).message };
    }
    // A grant is usable only by the step turns of the mission whose gate it came from.
    if (req.oneShotGrant && !req.turnId.startsWith(`${req.oneShotGrant.missionId}/`))
      return { refused: `its one-shot grant belongs to mission ${req.oneShotGrant.missionId}` };
    const ceiling = agentCaps.intersect(mcpCeiling(tierCeiling(tier, deps.agent.tierPolicy), tier, deps.mcp?.tierGrants ?? {}));
    return { tier, effective: (limit ? ceiling.intersect(limit) : ceiling).toJSON() };
  }

  return {
    /**
     * Verifies the request's proof and its binding to this workflow, resolves the tier, computes the
     * effective capabilities once, claims the request for this run and writes `TurnStarted`.
     */
    async openTurn(req: TurnRequest): Promise<OpenTurnResult> {
      const { workflowId, runId } = currentExecution();
      if (req.turnId !== workflowId)
        return reject(
          req,
          workflowId,
          `the request is for turn "${req.turnId}" but was started as workflow "${workflowId}" (a copied request)`,
        );
      const verdict = deps.proofs.verify(req);
      if (!verdict.ok) return reject(req, workflowId, verdict.reason);
      const granted = authorityOf(req);
      if ('refused' in granted) return reject(req, workflowId, granted.refused);
      const { tier } = granted;
      // A specialist's turn: its lead, its specialist and the set it claims are checked against what this worker holds.
      const delegation = req.delegatedBy ? await checkDelegation(deps, { ...req, delegatedBy: req.delegatedBy }) : undefined;
      if (delegation && 'refused' in delegation) return reject(req, workflowId, `specialist turn refused: ${delegation.refused}`);
      // A rerun of an approved call continues from the turn that asked: its record (claimed once, below).
      const resumed = req.resumeFrom ? await resumeRecordFor(deps, { ...req, resumeFrom: req.resumeFrom }) : undefined;
      if (resumed && 'refused' in resumed) return reject(req, workflowId, `it may not resume: ${resumed.refused}`);
      const record = resumed?.record;
      // Who the turn runs as: the specialist its verified delegation names, or the one whose approved call it reruns.
      const role = runsAs(deps, req, record);
      if ('refused' in role) return reject(req, workflowId, `it may not resume: ${role.refused}`);
      const effective = role.within
        ? CapabilitySet.fromJSON(granted.effective).intersect(CapabilitySet.fromJSON(role.within)).toJSON()
        : granted.effective;
      // Untrusted content already in context: the message itself unless the owner sent it, earlier tainted turns,
      // and what the turn it continues had read.
      // A specialist's task is its lead's model's text: as clean as the lead was when it wrote it.
      const fromMessage = req.delegatedBy
        ? delegatedTaskLabel(req)
        : messageLabel(tier, req.channel.sender, req.channel.name, places.owners);
      const inherited = req.delegatedBy?.taint ?? [];
      const history = await deps.history.load(sessionWorkflowId(req.channel.name, req.channel.sessionId), SESSION_HISTORY_LIMIT);
      const taint = [
        ...new Set([...(fromMessage ? [fromMessage] : []), ...inherited, ...historyLabels(history), ...(record?.taint ?? [])]),
      ];
      const authority: TurnAuthority = {
        effective,
        trustTier: tier,
        sessionId: req.channel.sessionId,
        ...(req.oneShotGrant ? { grant: req.oneShotGrant } : {}),
        requestHash: turnRequestHash(req),
        taint,
        channel: req.channel,
        ...(req.replyRoute ? { replyRoute: req.replyRoute } : {}),
        ...(role.specialist ? { specialist: role.specialist, leadTurnId: role.leadTurnId } : {}),
        ...(role.spendLimit ? { spendLimit: role.spendLimit } : {}),
      };
      const claim = await deps.claims.claim({ kind: 'turn', subject: req.turnId, workflowId, runId, data: authority });
      if (claim.status === 'taken')
        return reject(
          req,
          workflowId,
          `this request was already used by run ${claim.by.runId} of ${claim.by.workflowId} (a replayed request runs nothing)`,
        );
      const resumeTaken = record ? await claimResume(deps, record, req.turnId, { workflowId, runId }) : undefined;
      if (resumeTaken) return reject(req, workflowId, `it may not resume: ${resumeTaken}`);
      await deps.audit.append(bookkeepingKey('opened'), {
        type: 'TurnStarted',
        turnId: req.turnId,
        sessionId: req.channel.sessionId,
        channel: req.channel.platform,
        channelName: req.channel.name,
        trustTier: tier,
        effectiveCapabilities: claim.data.effective,
        ...(role.specialist ? { parentTurnId: role.leadTurnId, specialist: role.specialist } : {}),
      });
      const spend = await openedSpend(sessionWorkflowId(req.channel.name, req.channel.sessionId), role.spendLimit);
      const mcpTools = await mcpClasses.load();
      return {
        ok: true,
        effective: claim.data.effective,
        budgetMs: deps.agent.budgetMs,
        ...(spend ? { spend } : {}),
        // Only the tools this turn could ever run: the others cost tokens on every step and invite refusals.
        toolIds: offeredToolIds([...toolsById.keys()], claim.data.effective),
        taint: {
          sources: claim.data.taint ?? [],
          messageTrusted: fromMessage === undefined,
          policy: deps.agent.taintPolicy ?? {},
          ...(places.owners?.length ? { owners: [...places.owners] } : {}),
          ...(Object.keys(mcpTools).length > 0 ? { mcpTools } : {}),
        },
        ...(deps.agent.hostQueue ? { hostQueue: deps.agent.hostQueue } : {}),
        ...(record ? { resume: openedResume(deps, record, req.turnId, runId) } : {}),
      };
    },
  };
}
