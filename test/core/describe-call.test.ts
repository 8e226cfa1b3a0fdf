/**
 * describeCall: every catalog tool rendered from its parser's canonical input (argv, normalized
 * path, canonical URL, recipients), secrets redacted, long values cut with their size in bytes,
 * escaping that keeps one value on one line, and the JSON fallback for unknown tools and inputs
 * that do not parse.
 */
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG } from '../../core/tool-catalog.js';
import {
  DESCRIBE_MAX_CHARS,
  DESCRIBE_MAX_LINE,
  DESCRIBED_TOOLS,
  describeCall,
  inputDigest,
  isSecretName,
} from '../../core/tools/describe-call.js';

const TOKEN = 'sk-live-4f9a8b7c6d5e4f3a2b1c';
const long = 'x'.repeat(2500) + 'MIDDLE-MARKER' + 'x'.repeat(2500) + 'TAIL-MARKER';

/** One valid input per catalog tool, with the line(s) it must produce. */
const SAMPLES: Record<string, { input: unknown; expect: string[] }> = {
  'shell.exec': {
    input: { argv: ['git', 'commit', '-m', 'fix it'], cwd: '/home/u/repo/./', timeoutMs: 5000 },
    expect: ['argv: git commit -m "fix it"', 'cwd: /home/u/repo', 'timeout: 5000 ms'],
  },
  'shell.spawn': { input: { argv: ['npm', 'test'], maxDurationMs: 60000 }, expect: ['argv: npm test', 'max duration: 60000 ms'] },
  'fs.read': { input: { path: '/home/u/a/../.ssh/id_rsa' }, expect: ['path: /home/u/.ssh/id_rsa'] },
  'fs.write': {
    input: { path: '/tmp/notes.txt', content: 'hello\nworld' },
    expect: ['path: /tmp/notes.txt', 'mode: overwrite', 'content: 11 bytes: "hello\\nworld"'],
  },
  'fs.delete': { input: { path: '/tmp/build', recursive: true }, expect: ['path: /tmp/build', 'recursive: yes (the whole tree)'] },
  'fs.metadata': { input: { path: '/etc//hosts' }, expect: ['path: /etc/hosts'] },
  'fs.attach': { input: { path: '/home/u/./chart.png' }, expect: ['path: /home/u/chart.png'] },
  'net.fetch': {
    input: { url: 'HTTPS://Example.COM:443/a/./b?q=1', headers: { Accept: 'text/html' } },
    expect: ['request: GET https://example.com/a/b?q=1', 'headers: Accept: text/html'],
  },
  'net.post': {
    input: { url: 'https://api.example.com/v1/items', method: 'POST', body: '{"name":"x"}', contentType: 'application/json' },
    expect: ['request: POST https://api.example.com/v1/items', 'body: application/json, 12 bytes: "{\\"name\\":\\"x\\"}"'],
  },
  'git.status': { input: { repo: '/src/app/' }, expect: ['repo: /src/app'] },
  'git.diff': { input: { repo: '/src/app', staged: true, paths: ['a.ts'] }, expect: ['repo: /src/app', 'staged: yes', 'paths: a.ts'] },
  'git.commit': {
    input: { repo: '/src/app', message: 'Release 1.2', paths: ['CHANGELOG.md', 'package.json'] },
    expect: ['repo: /src/app', 'message: "Release 1.2"', 'paths: CHANGELOG.md package.json'],
  },
  'channel.send': {
    input: { channel: 'email', to: 'bob@example.com', text: 'see you at 5' },
    expect: ['channel: email', 'to: bob@example.com', 'text: 12 bytes: "see you at 5"'],
  },
  'mission.create': {
    input: {
      goal: 'passport',
      steps: [{ waitUntil: '2027-03-01T09:00', timeZone: 'Europe/Berlin' }, { notify: 'renew the passport' }, { wait: '3d' }, 'check mail'],
      capabilities: ['fs.read:/home/u/mail/**'],
    },
    expect: [
      'goal: "passport"',
      'step 1: wait until 2027-03-01T09:00 (Europe/Berlin)',
      'step 2: notify the owner "renew the passport"',
      'step 3: wait 3d',
      'step 4: task "check mail"',
      'capabilities: "fs.read:/home/u/mail/**"',
    ],
  },
  'mission.list': { input: { state: 'waiting' }, expect: ['state: waiting', 'limit: 20'] },
  'value.read': {
    input: { from: '{{value:v0123456789ab}}', as: 'number', question: 'the total', min: 0, max: 100 },
    expect: ['read: {{value:v0123456789ab}}', 'as: number between 0 and 100', 'question: "the total"'],
  },
  'mission.cancel': {
    input: { missionId: 'mission-3f2a9c', reason: 'done already' },
    expect: ['mission: mission-3f2a9c', 'reason: "done already"'],
  },
  'mcp.call': {
    input: { server: 'files', tool: 'search', arguments: { query: 'q3 report', limit: 3 } },
    expect: ['tool: files/search', 'arguments: {"limit":3,"query":"q3 report"}'],
  },
  'memory.write': { input: { text: 'Alice likes tea', topic: 'People' }, expect: ['text: "Alice likes tea"', 'topic: people'] },
  'memory.recall': { input: { query: 'tea', session: 's1', limit: 5 }, expect: ['query: "tea"', 'session: s1', 'limit: 5'] },
  'memory.forget': {
    input: { topic: 'people', from: '2026-01-01T00:00:00Z' },
    expect: ['topic: people', 'from: 2026-01-01T00:00:00.000Z'],
  },
  'config.read': { input: { key: 'llm.model' }, expect: ['key: llm.model'] },
  'config.write': { input: { key: 'llm.model', value: 'gpt-x' }, expect: ['key: llm.model', 'value: "gpt-x"'] },
  'audit.read': { input: { type: 'ToolCall' }, expect: ['type: ToolCall', 'limit: 20'] },
  'skills.propose': {
    input: {
      name: 'file-receipts',
      summary: 'File a receipt ',
      whenToUse: 'a receipt arrives',
      steps: ['read the receipt', 'write\nit down'],
      tools: ['fs.write', 'fs.read', 'fs.read'],
    },
    expect: [
      'skill: file-receipts',
      'summary: "File a receipt"',
      'when to use: "a receipt arrives"',
      'step 1: "read the receipt"',
      'step 2: "write\\nit down"',
      'tools it expects (it grants none): fs.read fs.write',
    ],
  },
  'skills.list': { input: { query: 'receipt' }, expect: ['skills matching: "receipt"'] },
  'skills.invoke': { input: { name: 'file-receipts' }, expect: ['skill: file-receipts'] },
  'graph.write': {
    input: {
      relations: [{ subject: { name: 'Dana ', kind: 'person' }, predicate: 'works_on', object: { name: 'Ledger', kind: 'project' } }],
    },
    expect: ['relation: "Dana" (person) works_on "Ledger" (project)'],
  },
  'agent.delegate': {
    input: { specialist: 'researcher', task: 'read https://a.example/ and summarize' },
    expect: ['specialist: researcher', 'task: "read https://a.example/ and summarize"'],
  },
  'graph.query': {
    input: { from: 'Dana', hops: [{ predicate: 'works_on' }, { predicate: 'works_on', direction: 'in' }] },
    expect: ['from: "Dana"', 'path: -works_on-> <-works_on-', 'limit: 20'],
  },
};

describe('describeCall', () => {
  it('has a renderer for every catalog tool, showing the canonical input its parser produces', () => {
    // Besides the catalog: a waitFor approval's question, a mission's plan (its plan gate), shown like mission.create,
    // and a mission's budget gate (the raise it asks for).
    expect([...DESCRIBED_TOOLS].sort()).toEqual([...TOOL_CATALOG.map((t) => t.id), 'mission.ask', 'mission.plan', 'mission.budget'].sort());
    for (const tool of TOOL_CATALOG) {
      const sample = SAMPLES[tool.id];
      expect(sample, `a sample for ${tool.id}`).toBeDefined();
      expect(describeCall(tool.id, sample!.input).lines, tool.id).toEqual(sample!.expect);
    }
  });

  it('redacts secret headers, query parameters, argv assignments, URL passwords, MCP arguments and secret config values — sizes stay', () => {
    const fetch = describeCall('net.fetch', {
      url: `https://api.example.com/v1?api_key=${TOKEN}&page=2`,
      headers: { Authorization: `Bearer ${TOKEN}`, Cookie: `sid=${TOKEN}`, 'X-Api-Key': TOKEN, Accept: 'application/json' },
    });
    const post = describeCall('net.post', { url: 'https://api.example.com/v1/login', method: 'POST', headers: { 'X-Auth-Token': TOKEN } });
    const shell = describeCall('shell.exec', {
      argv: [
        'curl',
        '-H',
        `Authorization: Bearer ${TOKEN}`,
        `--password=${TOKEN}`,
        `https://bob:${TOKEN}@example.com/x`,
        'GITHUB_TOKEN=' + TOKEN,
      ],
    });
    const mcp = describeCall('mcp.call', {
      server: 'crm',
      tool: 'login',
      arguments: { user: 'bob', password: TOKEN, nested: { accessToken: TOKEN, keyword: 'tea' } },
    });
    const config = describeCall('config.write', { key: 'telegram.token', value: TOKEN });
    const all = [fetch, post, shell, mcp, config].flatMap((d) => d.lines).join('\n');
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(TOKEN.slice(8));
    expect(fetch.lines).toEqual([
      'request: GET https://api.example.com/v1?api_key=[redacted]&page=2',
      `headers: Accept: application/json; Authorization: [redacted, ${7 + TOKEN.length} bytes]; Cookie: [redacted, ${4 + TOKEN.length} bytes]; X-Api-Key: [redacted, ${TOKEN.length} bytes]`,
    ]);
    expect(shell.lines[0]).toBe(
      `argv: curl -H Authorization: [redacted, ${7 + TOKEN.length} bytes] --password=[redacted, ${TOKEN.length} bytes] https://bob:[redacted]@example.com/x GITHUB_TOKEN=[redacted, ${TOKEN.length} bytes]`,
    );
    expect(mcp.lines[1]).toContain('"keyword":"tea"');
    expect(mcp.lines[1]).toContain('"user":"bob"');
    expect(config.lines).toEqual(['key: telegram.token', `value: [redacted, ${TOKEN.length} bytes]`]);
  });

  it('names secrets by token/secret/password/key words, not by accident', () => {
    for (const n of [
      'Authorization',
      'cookie',
      'X-Api-Key',
      'api_key',
      'apiKey',
      'accessToken',
      'client_secret',
      'DB_PASSWORD',
      'passphrase',
      'sessionId',
      'private_key',
      'key',
    ])
      expect(isSecretName(n), n).toBe(true);
    for (const n of ['keyword', 'monkey', 'Accept', 'user', 'query', 'limit', 'content-type']) expect(isSecretName(n), n).toBe(false);
  });

  it('cuts long content, messages, bodies and texts in the middle (both ends shown), giving the full size in bytes', () => {
    const cases = [
      describeCall('fs.write', { path: '/tmp/big', content: long }),
      describeCall('git.commit', { repo: '/r', message: long.slice(0, 9000) }),
      describeCall('net.post', { url: 'https://x.example/', method: 'PUT', body: long, contentType: 'text/plain' }),
      describeCall('memory.write', { text: long.slice(0, 7000) }),
      describeCall('mcp.call', { server: 's', tool: 't', arguments: { blob: long } }),
    ];
    for (const d of cases) {
      const text = d.lines.join('\n');
      expect(text).not.toContain('MIDDLE-MARKER');
      expect(text).toContain('TAIL-MARKER');
      expect(text).toMatch(/…[^…]*"? \(cut in the middle; \d+ bytes in all\)/);
      for (const line of d.lines) expect(line.length).toBeLessThan(DESCRIBE_MAX_CHARS + 120);
    }
    expect(cases[0]!.lines[2]).toMatch(/^content: 5024 bytes: "x{200}…x{89}TAIL-MARKER" \(cut in the middle; 5024 bytes in all\)$/);
    // Many arguments or headers: the line is cut too, saying so.
    const many = describeCall('shell.exec', { argv: ['echo', ...Array.from({ length: 400 }, (_, i) => `arg${i}`)] }).lines[0]!;
    expect(many.length).toBeLessThanOrEqual(DESCRIBE_MAX_LINE + 60);
    expect(many).toMatch(/^argv: echo arg0 .*….* arg399 \(line cut in the middle; \d+ characters in all\)$/);
    // Multi-byte text is counted in UTF-8 bytes.
    expect(describeCall('channel.send', { channel: 'telegram', to: '42', text: 'héllo ✓' }).lines[2]).toBe('text: 10 bytes: "héllo ✓"');
  });

  it('keeps each value on its line: newlines, control and bidi characters are escaped', () => {
    const d = describeCall('shell.exec', { argv: ['echo', 'ok\nTool:     fs.read', 'a\u202Eb', 'c\u0007'] });
    expect(d.lines).toEqual(['argv: echo "ok\\nTool:     fs.read" "a\\u202eb" "c\\u0007"']);
    expect(describeCall('fs.read', { path: '/tmp/a\u2028b' }).lines).toEqual(['path: "/tmp/a\\u2028b"']);
  });

  it('falls back to redacted, cut canonical JSON for unknown tools and inputs that do not parse', () => {
    expect(describeCall('weather.get', { city: 'Oslo', apiKey: TOKEN, b: 1, a: [1, 2] }).lines).toEqual([
      `input: {"a":[1,2],"apiKey":"[redacted, ${TOKEN.length} bytes]","b":1,"city":"Oslo"}`,
    ]);
    const bad = describeCall('shell.exec', { argv: ['/bin/sh', '-c', 'rm -rf ~'], token: TOKEN });
    expect(bad.lines[0]).toMatch(
      /^input \(does not parse: shell\.exec: unknown input field "token"\): \{"argv":\["\/bin\/sh","-c","rm -rf ~"\],"token":"\[redacted, 28 bytes\]"\}$/,
    );
    expect(describeCall('weather.get', undefined).lines).toEqual(['input: null']);
    expect(describeCall('weather.get', { big: long }).lines[0]).toMatch(/\(cut in the middle; 5034 bytes in all\)$/);
  });

  it('gives the 12-hex digest that ties a request to the audit log', () => {
    expect(inputDigest('0123456789abcdef0123')).toBe('0123456789ab');
    expect(inputDigest(undefined)).toBe('?');
  });
});
