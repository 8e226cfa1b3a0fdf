/**
 * `channel.send` as the core knows it (pure, workflow-safe): send a text message on a configured
 * channel (a Telegram chat, an email address), not necessarily the one the turn came from. The
 * scope is the seed's `channel.send:<channel name>` (D4: qualifier "channel name glob"; D5:
 * Trusted ✓, SemiTrusted ▲ "channel allowlist", Untrusted ⊘). The channel name is concrete (no
 * glob characters) so the needed scope names exactly one channel; the recipient is opaque here and
 * validated by the channel's deliverer.
 */
import { z } from 'zod';
import { defineTool } from './define-tool.js';
import { patternField, says, textField } from './fields.js';

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

const TO_MESSAGE = says(
  `"to" must be a non-empty recipient of at most ${CHANNEL_MAX_TO} characters without control characters`,
  'a chat id for Telegram, an address for email',
);

/** `channel.send`: send one message on a configured channel; a retried call sends it once. */
export const channelSendTool = defineTool({
  id: 'channel.send',
  summary: 'Send a text message on a configured channel',
  description:
    'Send a text message on a configured channel (not necessarily this conversation\'s): {channel, to, text}, e.g. {"channel": "telegram", "to": "<chat id>", "text": "..."}. Returns {channel, to, sent}. Sent once even if retried.',
  input: () =>
    z.strictObject({
      channel: patternField(
        'channel',
        CHANNEL_NAME,
        'must be a configured channel name (letters, digits, ".", "_", "-")',
        'Channel name, e.g. "telegram" or "email".',
        'e.g. "telegram" or "email"; wildcards are not allowed',
      ),
      to: z
        .string({ error: TO_MESSAGE })
        .max(CHANNEL_MAX_TO, { error: TO_MESSAGE })
        .refine((v) => v.trim() !== '' && !CONTROL.test(v), { error: TO_MESSAGE })
        .describe('Recipient: a Telegram chat id, an email address.'),
      text: textField('text', CHANNEL_MAX_TEXT, 'The message.', { longHint: 'send a shorter message, or several' }).refine(
        (v) => !TEXT_CONTROL.test(v),
        { error: says('"text" contains a control character') },
      ),
    }),
  scope: { base: 'channel.send', qualifier: (i) => i.channel },
  idempotency: 'keyed',
  confirmFirst: true,
  provenance: { output: 'trusted', effect: true, egressFields: ['channel', 'to'], contentFields: ['text'] },
});

export const parseChannelSendInput = channelSendTool.parse;
