/**
 * Structured logs (AIVYX_LOG_FORMAT=json): one JSON object per line, our progress lines and the
 * Temporal SDK's alike, with secret- and content-bearing fields redacted at any depth.
 */
import { DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { processLogs, REDACTED, redactLogFields } from '../../infra/telemetry/index.js';

describe('redactLogFields', () => {
  it('replaces secrets, message text and tool inputs at any depth, keeping ids and hashes', () => {
    const fields = {
      workflowId: 'turn-rest-1',
      attempt: 2,
      apiKey: 'sk-live-1',
      headers: { Authorization: 'Bearer abc', 'x-request-id': 'r1' },
      passphrase: 'correct horse',
      botToken: '123:abc',
      request: { messageId: 'm1', message: { content: [{ type: 'text', text: 'my locker code' }] } },
      call: { tool: 'fs.write', input: { path: '/home/me/diary.txt', content: 'dear diary' }, inputHash: 'h1' },
      activity: { args: ['raw'], result: { output: 'what it read' } },
      calls: [{ tool: 'net.post', arguments: '{"body":"x"}' }],
    };
    expect(redactLogFields(fields)).toEqual({
      workflowId: 'turn-rest-1',
      attempt: 2,
      apiKey: REDACTED,
      headers: { Authorization: REDACTED, 'x-request-id': 'r1' },
      passphrase: REDACTED,
      botToken: REDACTED,
      request: { messageId: 'm1', message: REDACTED },
      call: { tool: 'fs.write', input: REDACTED, inputHash: 'h1' },
      activity: { args: REDACTED, result: REDACTED },
      calls: [{ tool: 'net.post', arguments: REDACTED }],
    });
  });

  it('leaves scalars alone, renders bigints and errors, and stops at a depth', () => {
    expect(redactLogFields('plain')).toBe('plain');
    expect(redactLogFields(10n)).toBe('10');
    // An error's message can quote tool output or the prompt: only its name (and an AivyxError's kind) stays.
    expect(redactLogFields({ error: new TypeError('boom: my locker code') })).toEqual({ error: { name: 'TypeError' } });
    const deep = { a: { b: { c: { d: { e: { f: { g: 1 } } } } } } };
    expect(JSON.stringify(redactLogFields(deep))).toContain('[…]');
  });
});

describe('processLogs', () => {
  function capture(format: 'text' | 'json') {
    const lines: string[] = [];
    return { logs: processLogs(format, (s) => lines.push(s)), lines };
  }

  it('text: the lines a person has always seen, and the SDK keeps its own format', () => {
    const { logs, lines } = capture('text');
    logs.line('database: PGlite in /x');
    expect(lines).toEqual(['aivyx: database: PGlite in /x\n']);
    expect(logs.sdk).toBeUndefined();
  });

  it('json: one object per line for our lines and the SDK logger, fields redacted, level and msg not spoofable', () => {
    const { logs, lines } = capture('json');
    logs.line('starting the Temporal dev server…');
    const sdk = new DefaultLogger('WARN', logs.sdk);
    sdk.info('below the level: not written');
    sdk.warn('Activity failed', {
      workflowId: 'turn-1',
      activityType: 'runTool',
      args: [{ input: 'secret' }],
      level: 'debug',
      msg: 'forged',
    });
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    const [ours, theirs] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(ours).toMatchObject({ level: 'info', msg: 'starting the Temporal dev server…', logger: 'aivyx', pid: process.pid });
    expect(theirs).toMatchObject({
      level: 'warn',
      msg: 'Activity failed',
      logger: 'temporal',
      workflowId: 'turn-1',
      activityType: 'runTool',
      args: REDACTED,
    });
    expect(Date.parse(String(theirs!.time))).not.toBeNaN();
    expect(lines.join('')).not.toContain('secret');
  });
});
