/** The workflow's taint rule (core/taint.ts): what a turn that read untrusted content may still do on its own. */
import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { describeTaint, parseTaintPolicy, stricter, TurnTaint, flatLabel, flatSources } from '../../core/taint.js';
import { findTool, TOOL_CATALOG } from '../../core/tool-catalog.js';

const tool = (id: string) => findTool(id)!;
const fetch = (url: string) => tool('net.fetch').parse({ url });

describe('a clean turn', () => {
  it('decides nothing: no taint, no sources', () => {
    const t = new TurnTaint([], 'hello');
    expect(t.tainted).toBe(false);
    expect(t.decide(tool('shell.exec'), { argv: ['ls'] }, {})).toBeUndefined();
  });
});

describe('a tainted turn', () => {
  const tainted = () => new TurnTaint(['a page from evil.example'], 'summarise https://news.example/today please');

  it('reads stay free, and still carry the sources (the audit log records them)', () => {
    expect(tainted().decide(tool('fs.read'), { path: '/tmp/x' }, {})).toEqual({ sources: ['a page from evil.example'], action: 'free' });
    expect(tainted().decide(tool('memory.recall'), {}, {})?.action).toBe('free');
  });

  it('every effect tool is gated by default, whatever its confirm-first setting', () => {
    for (const def of TOOL_CATALOG.filter((d) => d.provenance.effect)) expect(tainted().decide(def, {}, {})?.action, def.id).toBe('gate');
  });

  it('the policy can deny or allow a tool', () => {
    expect(tainted().decide(tool('net.post'), {}, { 'net.post': 'deny' })?.action).toBe('deny');
    expect(tainted().decide(tool('memory.write'), {}, { 'memory.write': 'allow' })?.action).toBe('allow');
  });

  it('a fetch of a URL the owner named is free; one that appears only in untrusted content (or nowhere) is egress', () => {
    expect(tainted().decide(tool('net.fetch'), fetch('https://news.example/today'), {})?.action).toBe('free');
    expect(tainted().decide(tool('net.fetch'), fetch('https://evil.example/?q=secret'), {})?.action).toBe('gate');
    expect(tainted().decide(tool('net.fetch'), fetch('https://news.example/today?leak=1'), {})?.action).toBe('gate');
  });

  it("a destination found in a trusted result counts as the owner's", () => {
    const t = tainted();
    t.addTrusted('{"content":"see https://docs.example/a"}');
    expect(t.decide(tool('net.fetch'), fetch('https://docs.example/a'), {})?.action).toBe('free');
  });

  it('an untrusted message gives no trusted text: every fetch is egress', () => {
    const t = new TurnTaint(['a message from mallory@evil.example on email (SemiTrusted)'], '');
    expect(t.decide(tool('net.fetch'), fetch('https://news.example/today'), {})?.action).toBe('gate');
  });

  it('sources are kept once, in order, and an approval request names at most five', () => {
    const t = new TurnTaint(['a', 'b'], '');
    t.add('a');
    t.add('c');
    expect(t.sources).toEqual(['a', 'b', 'c']);
    expect(describeTaint(['1', '2', '3', '4', '5', '6', '7'])).toBe('after untrusted content (1; 2; 3; 4; 5 and 2 more)');
  });

  it('stricter picks deny over gate over allow over free', () => {
    expect(stricter('gate', 'deny')).toBe('deny');
    expect(stricter('allow', 'gate')).toBe('gate');
    expect(stricter('free', 'allow')).toBe('allow');
  });
});

describe('AIVYX_TAINT_POLICY', () => {
  it('parses tool=action pairs', () => {
    expect(parseTaintPolicy(' net.post=deny , memory.write=allow ', TOOL_CATALOG)).toEqual({ 'net.post': 'deny', 'memory.write': 'allow' });
    expect(parseTaintPolicy('', TOOL_CATALOG)).toEqual({});
  });

  it.each([
    ['net.post', /is not tool=action/],
    ['net.postt=deny', /no tool named "net.postt"/],
    ['fs.read=deny', /fs.read is a read; taint never stops reads/],
    ['net.post=maybe', /"maybe" is not an action for net.post/],
    ['net.post=deny=x', /is not tool=action/],
  ])('refuses %s with a Config error', (raw, message) => {
    let error: unknown;
    try {
      parseTaintPolicy(raw, TOOL_CATALOG);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AivyxError);
    expect((error as AivyxError).kind).toBe('Config');
    expect((error as AivyxError).message).toMatch(message);
  });
});

describe('flat labels (issue 31)', () => {
  const page = 'a page from evil.example';
  const file = 'a file outside the trusted roots';
  const message = 'a message from 200000004 on telegram (SemiTrusted)';

  it('a label is its sources, de-duplicated, never a label inside a label', () => {
    expect(flatLabel([page, file, page])).toBe(`${page}; ${file}`);
    expect(flatSources([`${page}; ${file}`, file, message])).toEqual([page, file, message]);
    expect(describeTaint([`${page}; ${file}`, page])).toBe(`after untrusted content (${page}; ${file})`);
  });

  it('turn after turn, a conversation’s label stays as short as its sources', () => {
    let label = flatLabel([file]);
    for (let turn = 0; turn < 10; turn++) label = flatLabel([label, page]);
    expect(label).toBe(`${file}; ${page}`);
  });

  it('labels stored nested before this read back flat', () => {
    const legacy = `after untrusted content (earlier in this conversation: after untrusted content (${file}; ${message}))`;
    expect(flatSources([legacy])).toEqual([file, message]);
    expect(flatSources([`a memory written after untrusted content (${page})`])).toEqual([page]);
    // A source's own parentheses stay whole.
    expect(flatSources([`${message}; ${page}`])).toEqual([message, page]);
  });
});
