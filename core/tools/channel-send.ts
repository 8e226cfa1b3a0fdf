/**
 * `channel.send` as the core knows it (pure, workflow-safe): send a text message on a configured
 * channel (a Telegram chat, an email address), not necessarily the one the turn came from. The
 * scope is the seed's `channel.send:<channel name>` (D4: qualifier "channel name glob"; D5:
 * Trusted ✓, SemiTrusted ▲ "channel allowlist", Untrusted ⊘). The channel name is concrete (no
 * glob characters) so the needed scope names exactly one channel; the recipient is opaque here and
 * validated by the channel's deliverer.
 */
import { asRecord, invalid } from './tool-input.js';
import type { ToolDescriptor } from '../tools.js';

/** Validated input of `channel.send`. */
export interface ChannelSendInput {
  /** The channel instance name, e.g. `telegram`, `email`. */
  channel: string;
  /** The recipient in the channel's own terms (chat id, email address). */
  to: string;
  text: string;
}

/** A channel name: letters, digits, `.`, `_`, `-` — never `*`, `?` or `:`, so the scope is never a glob. */
export const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Longest recipient (characters): an email address is at most 254. */
export const CHANNEL_MAX_TO = 320;
/** Longest message (characters): Telegram's limit for one message. */
export const CHANNEL_MAX_TEXT = 4096;

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
// eslint-disable-next-line no-control-regex -- text may hold newlines and tabs, nothing else below U+0020
const TEXT_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/u;

/** Validates a `channel.send` input; throws AivyxError(InvalidScope). */
export function parseChannelSendInput(input: unknown): ChannelSendInput {
  const rec = asRecord('channel.send', input, ['channel', 'to', 'text']);
  if (typeof rec.channel !== 'string' || !CHANNEL_NAME.test(rec.channel)) {
    throw invalid('channel.send', '"channel" must be a configured channel name (letters, digits, ".", "_", "-")', 'e.g. "telegram" or "email"; wildcards are not allowed');
  }
  if (typeof rec.to !== 'string' || rec.to.trim() === '' || rec.to.length > CHANNEL_MAX_TO || CONTROL.test(rec.to)) {
    throw invalid('channel.send', `"to" must be a non-empty recipient of at most ${CHANNEL_MAX_TO} characters without control characters`, 'a chat id for Telegram, an address for email');
  }
  if (typeof rec.text !== 'string' || rec.text.trim() === '') throw invalid('channel.send', '"text" must be a non-empty string');
  if (rec.text.length > CHANNEL_MAX_TEXT) throw invalid('channel.send', `"text" is longer than ${CHANNEL_MAX_TEXT} characters`, 'send a shorter message, or several');
  if (TEXT_CONTROL.test(rec.text)) throw invalid('channel.send', '"text" contains a control character');
  return { channel: rec.channel, to: rec.to, text: rec.text };
}

/** `channel.send`: send one message on a configured channel; a retried call sends it once. */
export const channelSendTool: ToolDescriptor = {
  id: 'channel.send',
  description: 'Send a text message on a configured channel (not necessarily this conversation\'s): {channel, to, text}, e.g. {"channel": "telegram", "to": "<chat id>", "text": "..."}. Returns {channel, to, sent}. Sent once even if retried.',
  inputSchema: {
    type: 'object',
    properties: {
      channel: { type: 'string', description: 'Channel name, e.g. "telegram" or "email".' },
      to: { type: 'string', maxLength: CHANNEL_MAX_TO, description: 'Recipient: a Telegram chat id, an email address.' },
      text: { type: 'string', maxLength: CHANNEL_MAX_TEXT, description: 'The message.' },
    },
    required: ['channel', 'to', 'text'],
    additionalProperties: false,
  },
  requiredScope: (input) => `channel.send:${parseChannelSendInput(input).channel}`,
  // The deliverer's outbox is keyed by the call's idempotency key.
  idempotency: 'keyed',
};

/** The channel tools (appended to the catalog). */
export const CHANNEL_TOOLS: readonly ToolDescriptor[] = Object.freeze([channelSendTool]);

