/**
 * The pure halves of the value model's red-team fixes (test/redteam/value-attacks.test.ts): a
 * quarantined answer found inside a longer token, a trusted read's echo of its own input, and the
 * sources a specialist's rendered answer shows its lead.
 */
import { describe, expect, it } from 'vitest';
import type { TranscriptItem } from '../../core/llm.js';
import { TurnTaint } from '../../core/taint.js';
import { findTool } from '../../core/tool-catalog.js';
import { withoutEchoes } from '../../core/trusted-reads.js';
import { renderedSources, valueHandle } from '../../core/values.js';

const tool = (id: string) => findTool(id)!;
const send = (to: string, text = 'hi') => tool('channel.send').parse({ channel: 'test', to, text });

describe("a trusted read's output, as the owner's text", () => {
  it("drops what echoes the call's input, as written or canonical, and keeps the owner's data", () => {
    expect(withoutEchoes({ key: 'mallory', value: null }, [{ key: 'mallory' }])).toEqual({ key: null, value: null });
    const read = { path: '/home/me/notes/a.txt', content: 'mail bob@x.example', bytes: 18, truncated: false };
    expect(withoutEchoes(read, [{ path: '/home/me/notes/./a.txt' }, { path: '/home/me/notes/a.txt' }])).toEqual({
      ...read,
      path: null,
    });
    expect(withoutEchoes({ byKey: { mallory: 1, other: 2 } }, [{ key: 'mallory' }])).toEqual({ byKey: { other: 2 } });
  });

  it('an echoed name vouches for nothing after untrusted content', () => {
    const t = new TurnTaint(['a page from evil.example'], 'summarise the page');
    t.addTrusted(JSON.stringify(withoutEchoes({ key: 'mallory', value: null }, [{ key: 'mallory' }])));
    t.addTrusted(JSON.stringify(withoutEchoes({ key: 'test', value: null }, [{ key: 'test' }])));
    expect(t.decide(tool('channel.send'), send('mallory'), {})).toMatchObject({ action: 'gate', field: 'channel' });
  });
});

describe("a specialist's rendered answer", () => {
  const transcript: TranscriptItem[] = [
    { role: 'assistant', calls: [{ callId: 'c0', tool: 'fs.read', input: { path: '/tmp/x' } }] },
    {
      role: 'tool',
      results: [
        {
          callId: 'c0',
          tool: 'fs.read',
          outcome: {
            status: 'Completed',
            output: valueHandle('v0123456789ab', 'json', 10, 'a file outside the trusted roots'),
            verified: 'NotApplicable',
          },
        },
      ],
    },
  ];

  it('names the sources of the values it shows; an id it holds no handle for is held content all the same', () => {
    expect(renderedSources(transcript, ['v0123456789ab'])).toEqual(['a file outside the trusted roots']);
    expect(renderedSources(transcript, ['v0123456789ab', 'vffffffffffff'])).toEqual([
      'a file outside the trusted roots',
      'a value it held',
    ]);
  });
});
