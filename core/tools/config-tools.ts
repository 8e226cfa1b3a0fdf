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
import { asRecord, invalid } from './tool-input.js';
import type { ToolDescriptor } from '../tools.js';
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

function configKey(tool: string, value: unknown): string {
  if (typeof value !== 'string' || !CONFIG_KEY.test(value)) throw invalid(tool, '"key" must be a config key: a letter, then up to 127 letters, digits, ".", "_" or "-"', 'no wildcards, spaces or ":"');
  return value;
}

/** Validates a `config.read` input; throws AivyxError(InvalidScope). */
export function parseConfigReadInput(input: unknown): ConfigReadInput {
  const rec = asRecord('config.read', input, ['key']);
  return { key: configKey('config.read', rec.key) };
}

/** Validates a `config.write` input; throws AivyxError(InvalidScope). */
export function parseConfigWriteInput(input: unknown): ConfigWriteInput {
  const rec = asRecord('config.write', input, ['key', 'value']);
  const key = configKey('config.write', rec.key);
  if (typeof rec.value !== 'string' || rec.value.length > CONFIG_MAX_VALUE) throw invalid('config.write', `"value" must be a string of at most ${CONFIG_MAX_VALUE} characters`);
  return { key, value: rec.value };
}

/** Validates an `audit.read` input; throws AivyxError(InvalidScope). */
export function parseAuditReadInput(input: unknown): AuditReadInput {
  const rec = asRecord('audit.read', input, ['type', 'limit', 'allSessions']);
  if (rec.allSessions !== undefined && typeof rec.allSessions !== 'boolean') throw invalid('audit.read', '"allSessions" must be true or false');
  const out: AuditReadInput = { limit: AUDIT_READ_DEFAULT_LIMIT, allSessions: rec.allSessions === true };
  if (rec.type !== undefined) {
    if (typeof rec.type !== 'string' || !AUDIT_EVENT_TYPE.test(rec.type)) throw invalid('audit.read', '"type" must be an audit event type such as ToolCall or TurnStarted');
    out.type = rec.type;
  }
  if (rec.limit !== undefined) {
    if (typeof rec.limit !== 'number' || !Number.isInteger(rec.limit) || rec.limit < 1 || rec.limit > AUDIT_READ_MAX_LIMIT) throw invalid('audit.read', `"limit" must be an integer between 1 and ${AUDIT_READ_MAX_LIMIT}`);
    out.limit = rec.limit;
  }
  return out;
}

/** `config.read`: one configuration value (secret keys are never readable). */
export const configReadTool: ToolDescriptor = {
  id: 'config.read',
  description: 'Read one configuration value by key. Returns {key, value} (value null when unset). Secret keys are refused.',
  inputSchema: { type: 'object', properties: { key: { type: 'string', description: 'Config key, e.g. llm.model.' } }, required: ['key'], additionalProperties: false },
  requiredScope: (input) => `config.read:${parseConfigReadInput(input).key}`,
  idempotency: 'natural',
};

/** `config.write`: set one configuration value (verified by reading it back). */
export const configWriteTool: ToolDescriptor = {
  id: 'config.write',
  description: 'Set one configuration value. Returns {key, previous} (previous null when unset, or when it was a secret). Secret keys are refused.',
  inputSchema: {
    type: 'object',
    properties: { key: { type: 'string' }, value: { type: 'string', maxLength: CONFIG_MAX_VALUE } },
    required: ['key', 'value'],
    additionalProperties: false,
  },
  requiredScope: (input) => `config.write:${parseConfigWriteInput(input).key}`,
  // Setting the same value twice is the same effect.
  idempotency: 'natural',
};

/** `audit.read`: recent audit entries of this conversation (or, with allSessions, of all), optionally of one event type. */
export const auditReadTool: ToolDescriptor = {
  id: 'audit.read',
  description: `Read recent audit log entries (newest last) of this conversation's session, optionally only one event type; allSessions:true reads every session's entries (needs a wider grant). Returns {entries: [{seq, type, turnId, recordedAt, event}], truncated}; at most ${AUDIT_READ_MAX_LIMIT}.`,
  inputSchema: {
    type: 'object',
    properties: {
      type: { type: 'string', description: 'Event type, e.g. ToolCall, TurnStarted, ScopeDenied.' },
      limit: { type: 'integer', minimum: 1, maximum: AUDIT_READ_MAX_LIMIT, default: AUDIT_READ_DEFAULT_LIMIT },
      allSessions: { type: 'boolean', default: false, description: 'Read every session\'s entries, not only this conversation\'s.' },
    },
    additionalProperties: false,
  },
  requiredScope: (input) => {
    const req = parseAuditReadInput(input);
    return req.allSessions ? `audit.read:${req.type ?? '*'}` : AUDIT_READ_OWN_SESSION;
  },
  idempotency: 'natural',
};

/** config.read and config.write. */
export const CONFIG_TOOLS: readonly ToolDescriptor[] = Object.freeze([configReadTool, configWriteTool]);
/** audit.read. */
export const AUDIT_TOOLS: readonly ToolDescriptor[] = Object.freeze([auditReadTool]);
