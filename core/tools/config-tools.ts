/**
 * config.read / config.write and audit.read as the core knows them (pure, workflow-safe).
 *
 * Scope forms (documented in docs/amendments/2026-12-02-mcp-call-scope.md, "config and audit"):
 * - `config.read:<key>` / `config.write:<key>`: a key is a dotted name without glob characters or
 *   ':', so a held key glob (`config.read:llm.*`) matches it as a simple glob.
 * - `audit.read:own-session` by default: the entries of the turn's own session, any type (the
 *   SemiTrusted ▲; the tool filters by the session the activity hands it). No event type is
 *   lowercase, so the name cannot collide with `audit.read:<EventType>`.
 * - With `allSessions: true`, `audit.read:<EventType>` when `type` is given (PascalCase, e.g.
 *   `ToolCall`), `audit.read:*` when it is not: every session's entries. Rule 4: `audit.read:*`
 *   is a glob, granted only by bare `audit.read`, `audit.read:*` or an identical glob; a held
 *   `audit.read:ToolCall` grants only all sessions' ToolCall entries. The Untrusted ceiling
 *   `audit.read:public` names no event type (types are PascalCase, so "public" cannot be asked
 *   for) and is not `own-session`: an Untrusted turn reads nothing through this tool.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { booleanField, patternField, positiveIntField, says } from './fields.js';
import { AUDIT_READ_OWN_SESSION } from '../capability/trust-tier.js';

/** Validated input of `config.read`. */
export interface ConfigReadInput {
  key: string;
}

/** Validated input of `config.write`. */
export interface ConfigWriteInput {
  key: string;
  value: string;
}

/** Validated input of `audit.read`; `type` undefined means every event type; `allSessions` false means the turn's own session. */
export interface AuditReadInput {
  type?: string;
  limit: number;
  allSessions: boolean;
}

/** Most rows one audit.read returns. */
export const AUDIT_READ_MAX_LIMIT = 100;
/** Rows an audit.read returns when it does not say. */
export const AUDIT_READ_DEFAULT_LIMIT = 20;
/** Longest config value (characters). */
export const CONFIG_MAX_VALUE = 4096;

/** A config key: dotted/dashed name, no wildcards, no ':' (so it can never widen or forge a scope). */
export const CONFIG_KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
/** An audit event type name (PascalCase): `TurnStarted`, `ToolCall`, ... */
export const AUDIT_EVENT_TYPE = /^[A-Z][A-Za-z0-9]{0,63}$/;

const keyField = (description: string) =>
  patternField(
    'key',
    CONFIG_KEY,
    'must be a config key: a letter, then up to 127 letters, digits, ".", "_" or "-"',
    description,
    'no wildcards, spaces or ":"',
  );

/** `config.read`: one configuration value (secret keys are never readable). */
export const configReadTool = defineTool({
  id: 'config.read',
  description: 'Read one configuration value by key. Returns {key, value} (value null when unset). Secret keys are refused.',
  input: () => z.strictObject({ key: keyField('Config key, e.g. llm.model.') }),
  scope: { base: 'config.read', qualifier: (i) => i.key },
  idempotency: 'natural',
  provenance: { output: 'trusted', effect: false },
});

/** `config.write`: set one configuration value (verified by reading it back). */
export const configWriteTool = defineTool({
  id: 'config.write',
  description:
    'Set one configuration value. Returns {key, previous} (previous null when unset, or when it was a secret). Secret keys are refused.',
  input: () =>
    z.strictObject({
      key: keyField('Config key, e.g. llm.model.'),
      value: z
        .string({ error: says(`"value" must be a string of at most ${CONFIG_MAX_VALUE} characters`) })
        .max(CONFIG_MAX_VALUE, { error: says(`"value" must be a string of at most ${CONFIG_MAX_VALUE} characters`) })
        .describe('The new value.'),
    }),
  scope: { base: 'config.write', qualifier: (i) => i.key },
  // Setting the same value twice is the same effect.
  idempotency: 'natural',
  provenance: { output: 'trusted', effect: true },
});

/** `audit.read`: recent audit entries of this conversation (or, with allSessions, of all), optionally of one event type. */
export const auditReadTool = defineTool({
  id: 'audit.read',
  summary: "Read this conversation's recent audit entries",
  description: `Read this conversation's recent audit entries, newest last (allSessions: every session's). Returns {entries: [{seq, type, turnId, recordedAt, event}], truncated}.`,
  input: () =>
    z.strictObject({
      type: patternField(
        'type',
        AUDIT_EVENT_TYPE,
        'must be an audit event type such as ToolCall or TurnStarted',
        'e.g. ToolCall, ScopeDenied',
      ).optional(),
      limit: positiveIntField('limit', AUDIT_READ_MAX_LIMIT, `Default ${AUDIT_READ_DEFAULT_LIMIT}.`).optional(),
      allSessions: booleanField('allSessions', "Every session's entries.").default(false),
    }),
  canonical: ({ type, limit, allSessions }): AuditReadInput => ({
    limit: limit ?? AUDIT_READ_DEFAULT_LIMIT,
    allSessions,
    ...(type === undefined ? {} : { type }),
  }),
  scope: { base: 'audit.read', of: (i) => (i.allSessions ? `audit.read:${i.type ?? '*'}` : AUDIT_READ_OWN_SESSION) },
  idempotency: 'natural',
  // Entries carry senders, requested paths and URLs: other people's words.
  provenance: { output: 'untrusted', effect: false },
});

export const parseConfigReadInput = configReadTool.parse;
export const parseConfigWriteInput = configWriteTool.parse;
export const parseAuditReadInput = auditReadTool.parse;
