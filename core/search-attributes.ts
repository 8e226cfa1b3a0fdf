/**
 * The project's custom search attributes. Workflow code upserts these, so this file lives in
 * the workflow-safe zone and imports only @temporalio/common. The dev server and
 * `ensureNamespaceSetup` register every key in `AIVYX_SEARCH_ATTRIBUTES`.
 * SQLite visibility allows 10 custom Keyword attributes per namespace: keep the total within that.
 */
import { defineSearchAttributeKey } from '@temporalio/common';

/** The session (conversation) a turn workflow belongs to. */
export const AivyxSessionId = defineSearchAttributeKey('AivyxSessionId', 'KEYWORD');
/** The channel a turn arrived on (cli, rest, telegram, …). */
export const AivyxChannel = defineSearchAttributeKey('AivyxChannel', 'KEYWORD');
/** The trust tier of the principal behind a turn. */
export const AivyxTrustTier = defineSearchAttributeKey('AivyxTrustTier', 'KEYWORD');
/** How a turn ended (TurnOutcome status), set when it finishes. */
export const AivyxTurnOutcome = defineSearchAttributeKey('AivyxTurnOutcome', 'KEYWORD');
/** A mission's current state-machine state. */
export const AivyxMissionState = defineSearchAttributeKey('AivyxMissionState', 'KEYWORD');
/** The approval gate a mission is waiting on, if any. */
export const AivyxOpenGate = defineSearchAttributeKey('AivyxOpenGate', 'KEYWORD');
/** Who approved (or must approve) a mission's open gate. */
export const AivyxApprover = defineSearchAttributeKey('AivyxApprover', 'KEYWORD');

/** Every custom search attribute the namespace must have. */
export const AIVYX_SEARCH_ATTRIBUTES = [
  AivyxSessionId,
  AivyxChannel,
  AivyxTrustTier,
  AivyxTurnOutcome,
  AivyxMissionState,
  AivyxOpenGate,
  AivyxApprover,
] as const;
