/**
 * The pure halves of the value model's red-team fixes (test/redteam/value-attacks.test.ts): a
 * quarantined answer found inside a longer token, a trusted read's echo of its own input, and the
 * sources a specialist's rendered answer shows its lead.
 */
import { describe, expect, it } from 'vitest';
import { TurnTaint } from '../../core/taint.js';
import { findTool } from '../../core/tool-catalog.js';
import { withoutEchoes } from '../../core/trusted-reads.js';

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
