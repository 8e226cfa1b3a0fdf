/** `channel.send`: input rules, the sender port, and the port over the channels' delivery registry. */
import { describe, expect, it } from 'vitest';
import { channelSenderFromRegistry, createChannelSendTool, type ChannelSender } from '../../activities/tools/index.js';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { AivyxError } from '../../core/errors.js';
import { CHANNEL_MAX_TEXT, channelSendTool } from '../../core/tools/channel-send.js';
import { aivyxFailure, errorKindOf } from '../support/aivyx-failure.js';
import { toolContext } from '../support/tool-context.js';

type Sent = { channel: string; to: string; text: string; idemKey: string };

function recordingSender(): ChannelSender & { sent: Sent[] } {
  const sent: Sent[] = [];
  return { sent, send: async (channel, to, text, idemKey) => void sent.push({ channel, to, text, idemKey }) };
}

describe('channel.send input', () => {
  it('needs channel.send:<channel name>', () => {
    expect(channelSendTool.requiredScope({ channel: 'telegram', to: '12345', text: 'hi' })).toBe('channel.send:telegram');
    expect(channelSendTool.requiredScope({ channel: 'email', to: 'me@example.com', text: 'line 1\nline 2' })).toBe('channel.send:email');
  });

  it.each([
    ['not an object', 'hi'],
    ['missing channel', { to: '1', text: 'hi' }],
    ['glob channel', { channel: 'tele*', to: '1', text: 'hi' }],
    ['any channel', { channel: '*', to: '1', text: 'hi' }],
    ['colon in channel', { channel: 'a:b', to: '1', text: 'hi' }],
    ['empty to', { channel: 'telegram', to: ' ', text: 'hi' }],
    ['control character in to', { channel: 'email', to: 'a@b.c\r\nBcc: x@y.z', text: 'hi' }],
    ['empty text', { channel: 'telegram', to: '1', text: '' }],
    ['text too long', { channel: 'telegram', to: '1', text: 'x'.repeat(CHANNEL_MAX_TEXT + 1) }],
    ['unknown field', { channel: 'telegram', to: '1', text: 'hi', cc: '2' }],
  ])('refuses %s with InvalidScope', (_label, input) => {
    expect(errorKindOf(() => channelSendTool.requiredScope(input))).toBe('InvalidScope');
  });
});

describe('channel.send', () => {
  it("sends through the port under the call's idempotency key, and does not echo the text", async () => {
    const sender = recordingSender();
    const tool = createChannelSendTool({ sender });
    const c = toolContext();
    const r = await tool.run({ channel: 'telegram', to: '12345', text: 'build finished' }, c);
    expect(r).toEqual({ kind: 'completed', verified: 'Unverified', output: { channel: 'telegram', to: '12345', sent: true, chars: 14 } });
    expect(sender.sent).toEqual([{ channel: 'telegram', to: '12345', text: 'build finished', idemKey: c.idemKey }]);
    // A retry of the same call (same key) hands the deliverer the same key: its outbox sends once.
    await tool.run({ channel: 'telegram', to: '12345', text: 'build finished' }, c);
    expect(sender.sent.map((s) => s.idemKey)).toEqual([c.idemKey, c.idemKey]);
    expect(await tool.resolveScope({ channel: 'telegram', to: '12345', text: 'x' })).toBe('channel.send:telegram');
  });

  it('passes AivyxErrors through and wraps anything else as a Tool error', async () => {
    const channelDown = createChannelSendTool({
      sender: { send: async () => Promise.reject(new AivyxError('Channel', 'telegram said 400: chat not found')) },
    });
    expect(await aivyxFailure(channelDown.run({ channel: 'telegram', to: '1', text: 'x' }, toolContext()))).toMatchObject({
      kind: 'Channel',
      message: 'telegram said 400: chat not found',
    });
    const broken = createChannelSendTool({ sender: { send: async () => Promise.reject(new Error('socket hang up')) } });
    const e = await aivyxFailure(broken.run({ channel: 'telegram', to: '1', text: 'x' }, toolContext()));
    expect(e).toMatchObject({
      kind: 'Tool',
      message: 'channel.send: sending on "telegram" failed: socket hang up',
      detail: { tool: 'channel.send', channel: 'telegram' },
    });
  });

  it('does not send when already cancelled', async () => {
    const sender = recordingSender();
    const ac = new AbortController();
    ac.abort(new Error('gone'));
    await expect(
      createChannelSendTool({ sender }).run({ channel: 'telegram', to: '1', text: 'x' }, toolContext({ signal: ac.signal })),
    ).rejects.toThrow('gone');
    expect(sender.sent).toEqual([]);
  });
});

describe('channelSenderFromRegistry', () => {
  it("sends through the registered deliverer's send, looked up per call", async () => {
    const registry = new DeliveryRegistry();
    const sender = channelSenderFromRegistry(registry);
    const sent: string[] = [];
    // Registered after the port was made, as channels start after the worker.
    registry.register('telegram', { send: async (to, text, key) => void sent.push(`${to}|${text}|${key}`) });
    await sender.send('telegram', '42', 'hello', 'wf/run/1');
    expect(sent).toEqual(['42|hello|wf/run/1']);
  });

  it('fails clearly for an unknown channel and for a channel without send', async () => {
    const registry = new DeliveryRegistry();
    registry.register('rest', { deliverReply: async () => undefined });
    const tool = createChannelSendTool({ sender: channelSenderFromRegistry(registry) });
    const unknown = await aivyxFailure(tool.run({ channel: 'telegram', to: '1', text: 'x' }, toolContext()));
    expect(unknown).toMatchObject({
      kind: 'Tool',
      message: 'channel.send: no channel named "telegram" is configured on this worker',
      detail: { tool: 'channel.send', channel: 'telegram' },
    });
    const noSend = await aivyxFailure(tool.run({ channel: 'rest', to: '1', text: 'x' }, toolContext()));
    expect(noSend).toMatchObject({ kind: 'Tool', message: 'channel.send: channel "rest" cannot send messages to other recipients' });
  });
});
