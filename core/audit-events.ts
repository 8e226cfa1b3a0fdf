/**
 * Audit events (seed D4 "mixed model"). Every event is self-contained: readable without
 * cross-referencing others. Raw tool inputs never appear: only `inputHash`, the SHA-256
 * of the RFC 8785 canonical JSON of the input.
 */
import type { ChannelPlatform } from './channel.js';
import type { TrustTier } from './capability/index.js';

/** Memory operation kinds for the dedicated `MemoryAccess` view. */
export type MemoryOperation = 'Read' | 'Write' | 'Forget';

/** One auditable event. `type` names the kind; mission and gate kinds are added by the missions issue. */
export type AuditEvent =
  | {
      type: 'TurnStarted';
      turnId: string;
      sessionId: string;
      channel: ChannelPlatform;
      channelName: string;
      trustTier: TrustTier;
      effectiveCapabilities: string[];
    }
  | {
      /** A turn request failed its channel attestation; no LLM call was made. */
      type: 'TurnRejected';
      turnId: string;
      sessionId: string;
      channel: ChannelPlatform;
      channelName: string;
      claimedTrustTier: string;
      reason: string;
    }
  | {
      type: 'ToolCall';
      turnId: string;
      callId: string;
      toolId: string;
      scopeUsed: string;
      inputHash: string;
      outcome: string;
      durationMs: number;
    }
  | {
      type: 'ScopeDenied';
      turnId: string;
      callId: string;
      toolAttempted: string;
      scopeRequested: string;
      scopeQualifier: string | null;
      heldCapabilities: string[];
    }
  | {
      type: 'TurnEnded';
      turnId: string;
      outcome: string;
      toolCallsMade: number;
      durationMs: number;
    }
  | {
      type: 'MemoryAccess';
      turnId: string;
      operation: MemoryOperation;
      scope: string;
      queryOrKey: string;
    };

/** The `type` names of audit events. */
export type AuditEventType = AuditEvent['type'];
