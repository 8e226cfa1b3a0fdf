/** The scripted LLM: rule matching, step indexing, templates, streaming, delays and script validation. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LlmStepSink } from '../../activities/llm/llm-provider.js';
import {
  createScriptedProvider,
  loadScriptedProvider,
  SCRIPT_EXHAUSTED,
  SCRIPT_NO_MATCH,
  splitForStreaming,
  validateScript,
  type ScriptedScript,
} from '../../activities/llm/scripted-provider.js';
import { AivyxError } from '../../core/errors.js';
import type { LlmStepRequest, LlmStepResult, TranscriptItem } from '../../core/llm.js';
import { textContent } from '../../core/message.js';
import type { ToolResult } from '../../core/tools.js';

function req(text: string, step = 0, transcript: TranscriptItem[] = []): LlmStepRequest {
  return {
    turnId: 't1',
    step,
    history: [],
    message: { id: 'm1', sessionId: 's1', content: textContent(text), receivedAt: 0 },
    transcript,
    tools: [],
  };
}

function sink(signal = new AbortController().signal): LlmStepSink & { chunks: string[]; beats: number } {
  const s = { chunks: [] as string[], beats: 0, signal, text: (c: string) => void s.chunks.push(c), heartbeat: () => void s.beats++ };
  return s;
}

/** A step result without its usage (the tests below are about content; usage has its own test). */
function withoutUsage(r: LlmStepResult): LlmStepResult {
  const { usage: _usage, ...rest } = r;
  return rest as LlmStepResult;
}

function configError(f: () => unknown): AivyxError {
  try {
    f();
  } catch (e) {
    if (e instanceof AivyxError && e.kind === 'Config') return e;
    throw e;
  }
  throw new Error('expected a Config error');
}

const results: ToolResult[] = [
  {
    callId: 's0c0',
    tool: 'fs.read',
    outcome: {
      status: 'Completed',
      output: { path: '/etc/hostname', content: 'box\n', bytes: 4, meta: { owner: 'root' } },
      verified: 'NotApplicable',
    },
  },
  { callId: 's0c1', tool: 'shell.exec', outcome: { status: 'Denied', scope: 'shell.exec:rm', held: ['fs.read'] } },
  {
    callId: 's0c2',
    tool: 'fs.write',
    outcome: { status: 'Failed', error: { kind: 'Tool', message: 'fs.write: permission denied', hint: 'try\nelsewhere' } },
  },
];
const afterTools: TranscriptItem[] = [
  { role: 'assistant', calls: [] },
  { role: 'tool', results },
];

describe('scripted provider', () => {
  const script: ScriptedScript = {
    rules: [
      {
        name: 'read',
        regex: '^read\\s+(?<path>\\S+)$',
        steps: [
          {
            call: [
              { tool: 'fs.read', input: { path: '{{match.1}}', maxBytes: 10 } },
              { tool: 'fs.read', input: { path: '{{match.path}}.bak' } },
            ],
          },
          { say: 'got {{result.0.output.bytes}} bytes' },
        ],
      },
      { match: 'RUN', steps: [{ call: [{ tool: 'shell.exec', input: { argv: { $split: '{{message}}' } } }] }] },
      { match: 'fail', steps: [{ fail: 'model unavailable for {{message}}' }] },
      { steps: [{ say: 'echo: {{message}}' }] },
    ],
  };
  const llm = createScriptedProvider(script);

  it('tries rules in order; matches are case-insensitive; a rule without a matcher catches all', async () => {
    expect(withoutUsage(await llm.step(req('READ /etc/hostname'), sink()))).toEqual({
      type: 'tool_calls',
      calls: [
        { callId: 's0c0', tool: 'fs.read', input: { path: '/etc/hostname', maxBytes: 10 } },
        { callId: 's0c1', tool: 'fs.read', input: { path: '/etc/hostname.bak' } },
      ],
    });
    expect(withoutUsage(await llm.step(req('please run ls -la'), sink()))).toEqual({
      type: 'tool_calls',
      calls: [{ callId: 's0c0', tool: 'shell.exec', input: { argv: ['please', 'run', 'ls', '-la'] } }],
    });
    expect(withoutUsage(await llm.step(req('hello'), sink()))).toEqual({ type: 'final', text: 'echo: hello' });
    expect(llm.name).toBe('scripted');
  });

  it('indexes steps by req.step and reports exhaustion', async () => {
    expect(withoutUsage(await llm.step(req('read /x', 1, afterTools), sink()))).toEqual({ type: 'final', text: 'got 4 bytes' });
    expect(withoutUsage(await llm.step(req('read /x', 2, afterTools), sink()))).toEqual({ type: 'final', text: SCRIPT_EXHAUSTED });
    const noCatchAll = createScriptedProvider({ rules: [{ match: 'x', steps: [{ say: 'x' }] }] });
    expect(withoutUsage(await noCatchAll.step(req('y'), sink()))).toEqual({ type: 'final', text: SCRIPT_NO_MATCH });
  });

  it("fills templates from the message, the match and the previous step's results", async () => {
    const t = createScriptedProvider({
      rules: [
        {
          regex: 'say (\\w+)',
          steps: [
            { say: 'x' },
            {
              say: '{{ message }}|{{match.0}}|{{match.1}}|{{step}}|{{result.0.status}}|{{result.0.output.content}}|{{result.0.output.meta.owner}}|{{result.1.scope}}|{{result.2.error.message}}|{{result.9.status}}|{{result.0.output.meta}}',
            },
            { say: '{{results}}' },
          ],
        },
      ],
    });
    expect(withoutUsage(await t.step(req('Say Hi', 1, afterTools), sink()))).toEqual({
      type: 'final',
      text: 'Say Hi|Say Hi|Hi|1|Completed|box\n|root|shell.exec:rm|fs.write: permission denied||{"owner":"root"}',
    });
    expect(withoutUsage(await t.step(req('say hi', 2, afterTools), sink()))).toEqual({
      type: 'final',
      text: 'fs.read: Completed (NotApplicable); shell.exec: Denied (needs shell.exec:rm); fs.write: Failed (Tool: fs.write: permission denied (try elsewhere))',
    });
    expect(withoutUsage(await t.step(req('say hi', 2), sink()))).toEqual({ type: 'final', text: '(no tool results)' });
  });

  it('says sayOnFailure when a previous result did not complete', async () => {
    const t = createScriptedProvider({ rules: [{ steps: [{ say: 'x' }, { say: 'fine', sayOnFailure: 'trouble: {{result.1.status}}' }] }] });
    expect(withoutUsage(await t.step(req('a', 1, afterTools), sink()))).toEqual({ type: 'final', text: 'trouble: Denied' });
    const ok: TranscriptItem[] = [{ role: 'tool', results: [results[0] as ToolResult] }];
    expect(withoutUsage(await t.step(req('a', 1, ok), sink()))).toEqual({ type: 'final', text: 'fine' });
  });

  it('streams the text in pieces that add up to the final text', async () => {
    const t = createScriptedProvider({
      rules: [{ match: 'n', steps: [{ say: 'abcdefghij', chunks: 3 }] }, { steps: [{ say: 'one two three four five six seven' }] }],
    });
    const s1 = sink();
    expect(withoutUsage(await t.step(req('n'), s1))).toEqual({ type: 'final', text: 'abcdefghij' });
    expect(s1.chunks).toEqual(['abc', 'def', 'ghij']);
    const s2 = sink();
    await t.step(req('words'), s2);
    expect(s2.chunks).toEqual(['one two three ', 'four five six ', 'seven']);
    expect(splitForStreaming('  lead and trail  ').join('')).toBe('  lead and trail  ');
    expect(splitForStreaming('ab', 5)).toEqual(['a', 'b']);
    expect(splitForStreaming('')).toEqual([]);
  });

  it('streams optional text with tool calls and fails on a fail step', async () => {
    const t = createScriptedProvider({ rules: [{ steps: [{ say: 'Reading…', call: [{ tool: 'fs.read' }] }] }] });
    const s = sink();
    expect(withoutUsage(await t.step(req('x'), s))).toEqual({
      type: 'tool_calls',
      text: 'Reading…',
      calls: [{ callId: 's0c0', tool: 'fs.read', input: {} }],
    });
    expect(s.chunks.join('')).toBe('Reading…');
    await expect(llm.step(req('fail now'), sink())).rejects.toMatchObject({ kind: 'Llm', message: 'model unavailable for fail now' });
  });

  it('waits delayMs while heartbeating, and aborts promptly with the abort reason', async () => {
    const t = createScriptedProvider({ rules: [{ steps: [{ say: 'late', delayMs: 2_100 }] }] });
    const s = sink();
    const started = Date.now();
    expect(withoutUsage(await t.step(req('x'), s))).toEqual({ type: 'final', text: 'late' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    expect(s.beats).toBe(3);

    const ac = new AbortController();
    const reason = new Error('turn budget spent');
    setTimeout(() => ac.abort(reason), 50);
    const aborted = sink(ac.signal);
    const t2 = Date.now();
    await expect(createScriptedProvider({ rules: [{ steps: [{ say: 'never', delayMs: 60_000 }] }] }).step(req('x'), aborted)).rejects.toBe(
      reason,
    );
    expect(Date.now() - t2).toBeLessThan(1_000);
    expect(aborted.chunks).toEqual([]);
  });
});

describe('script validation', () => {
  it.each([
    [[], '$'],
    [{ rules: [] }, '$.rules'],
    [{ rules: [{ steps: [{ say: 'x' }] }], extra: 1 }, '$.extra'],
    [{ rules: [{ mtach: 'x', steps: [{ say: 'x' }] }] }, '$.rules[0].mtach'],
    [{ rules: [{ match: 'x', regex: 'y', steps: [{ say: 'x' }] }] }, '$.rules[0]'],
    [{ rules: [{ regex: '(', steps: [{ say: 'x' }] }] }, '$.rules[0].regex'],
    [{ rules: [{ steps: [] }] }, '$.rules[0].steps'],
    [{ rules: [{ steps: [{ say: 'x' }, { sya: 'y' }] }] }, '$.rules[0].steps[1]'],
    [{ rules: [{ steps: [{ say: 'x', chunks: 0 }] }] }, '$.rules[0].steps[0].chunks'],
    [{ rules: [{ steps: [{ say: 'x', delayMs: -5 }] }] }, '$.rules[0].steps[0].delayMs'],
    [{ rules: [{ steps: [{ say: 'hi {{mesage}}' }] }] }, '$.rules[0].steps[0].say'],
    [{ rules: [{ steps: [{ call: [] }] }] }, '$.rules[0].steps[0].call'],
    [{ rules: [{ steps: [{ call: [{ tool: '' }] }] }] }, '$.rules[0].steps[0].call[0].tool'],
    [
      { rules: [{ steps: [{ call: [{ tool: 'fs.read', input: { 'a b': ['{{nope}}'] } }] }] }] },
      '$.rules[0].steps[0].call[0].input["a b"][0]',
    ],
    [{ rules: [{ steps: [{ call: [{ tool: 'x', input: { argv: { $split: 1 } } }] }] }] }, '$.rules[0].steps[0].call[0].input.argv.$split'],
  ])('reports %j at %s', (script, path) => {
    const e = configError(() => validateScript(script, 'my-script.json'));
    expect(e.message.startsWith(`my-script.json: ${path}: `)).toBe(true);
    expect(e.detail).toEqual({ file: 'my-script.json', path });
  });

  it('loads files, naming the file in read, JSON and shape errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aivyx-script-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ rules: [{ steps: [{ say: 'from file' }] }] }));
    expect(withoutUsage(await (await loadScriptedProvider(`scripted:${good}`)).step(req('x'), sink()))).toEqual({
      type: 'final',
      text: 'from file',
    });
    expect(await (await loadScriptedProvider(good)).step(req('x'), sink())).toMatchObject({ text: 'from file' });

    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"rules": [');
    await expect(loadScriptedProvider(`scripted:${bad}`)).rejects.toMatchObject({
      kind: 'Config',
      message: expect.stringContaining(`${bad}: invalid JSON`),
    });
    writeFileSync(bad, JSON.stringify({ rules: [{ steps: [{ say: 1 }] }] }));
    await expect(loadScriptedProvider(`scripted:${bad}`)).rejects.toMatchObject({
      kind: 'Config',
      message: `${bad}: $.rules[0].steps[0].say: must be a string`,
    });
    await expect(loadScriptedProvider(`scripted:${join(dir, 'missing.json')}`)).rejects.toMatchObject({
      kind: 'Config',
      message: expect.stringContaining('missing.json'),
    });
    await expect(loadScriptedProvider('scripted:')).rejects.toMatchObject({ kind: 'Config' });
  });

  it('ships a valid demo script that greets, reads, writes, runs and echoes', async () => {
    const demo = await loadScriptedProvider(`scripted:${resolve('docs/examples/demo-script.json')}`);
    expect(await demo.step(req('hello'), sink())).toMatchObject({ type: 'final', text: expect.stringContaining('aivyx') });
    expect(await demo.step(req('read /etc/hostname'), sink())).toMatchObject({
      type: 'tool_calls',
      calls: [{ callId: 's0c0', tool: 'fs.read', input: { path: '/etc/hostname', maxBytes: 4096 } }],
    });
    expect(await demo.step(req('write /tmp/n.txt buy milk'), sink())).toMatchObject({
      calls: [{ tool: 'fs.write', input: { path: '/tmp/n.txt', content: 'buy milk\n' } }],
    });
    expect(await demo.step(req('run ls -la /tmp'), sink())).toMatchObject({
      calls: [{ tool: 'shell.exec', input: { argv: ['ls', '-la', '/tmp'] } }],
    });
    expect(await demo.step(req('read /x', 1, afterTools), sink())).toMatchObject({
      text: expect.stringMatching(/^I could not read \/x: /),
    });
    expect(await demo.step(req('what is up'), sink())).toMatchObject({
      type: 'final',
      text: expect.stringContaining('You said: what is up'),
    });
  });
});

describe('scripted usage', () => {
  it('reports the usage a step declares, else a quarter of the characters read and written, the same on every call', async () => {
    const t = createScriptedProvider({
      rules: [
        { match: 'declared', steps: [{ say: 'ok', usage: { inputTokens: 40, outputTokens: 10 } }] },
        { steps: [{ say: 'twelve chars' }] },
      ],
    });
    expect((await t.step(req('declared'), sink())).usage).toEqual({ inputTokens: 40, outputTokens: 10 });
    // 'estimate me' is 11 characters read (3 tokens), 'twelve chars' 12 written (3 tokens).
    const first = await t.step(req('estimate me'), sink());
    expect(first.usage).toEqual({ inputTokens: 3, outputTokens: 3 });
    expect((await t.step(req('estimate me'), sink())).usage).toEqual(first.usage);
    // A step past the script's end says so and reports nothing.
    expect((await t.step(req('estimate me', 5), sink())).usage).toBeUndefined();
  });

  it('refuses a malformed usage when the script loads', () => {
    const e = configError(() => validateScript({ rules: [{ steps: [{ say: 'x', usage: { inputTokens: 1 } }] }] }, 's.json'));
    expect(e.message).toContain('$.rules[0].steps[0].usage.outputTokens');
  });
});
