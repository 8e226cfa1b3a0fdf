/**
 * Configuration from the environment: one table of every variable, parsed before anything starts.
 * A bad value is refused naming the variable and its value — by `loadConfig`, and by the real
 * `aivyx` command before any database is opened or dev server started; `aivyx config` shows every
 * variable with its source and never a secret (docs/CONFIG.md's table: config-doc.test.ts).
 */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AivyxError } from '../../core/errors.js';
import { DEFAULT_CONFIRM_FIRST } from '../../core/tool-catalog.js';
import { describeEnv, ENV_TABLE, loadConfig, parseEnv } from '../../infra/config.js';
import { aivyx, cliEnv } from '../support/cli-process.js';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

function refusal(env: Record<string, string>): AivyxError {
  try {
    loadConfig(env, projectRoot);
  } catch (e) {
    expect(e).toBeInstanceOf(AivyxError);
    return e as AivyxError;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('reads the defaults', () => {
    const c = loadConfig({}, projectRoot);
    expect(c).toMatchObject({
      namespace: 'default',
      // Unset: the stack names it after the install's identity (aivyx-<id>).
      taskQueue: undefined,
      temporalPort: 7233,
      uiPort: 8233,
      restPort: 8787,
      codecPort: 8234,
      turnBudgetMs: 300_000,
      mcpServers: [],
      mcpTiers: {},
    });
    expect(c.capabilities).toContain('fs.read');
    // The catalog's confirm-first tools (their list is pinned in test/core/define-tool.test.ts).
    expect([...c.confirmFirst].sort()).toEqual([...DEFAULT_CONFIRM_FIRST].sort());
  });

  it('takes what is set: lists (an empty one too), ports, on/off', () => {
    const c = loadConfig(
      {
        AIVYX_CAPABILITIES: 'fs.read:/srv/**, llm.call',
        AIVYX_REST_PORT: '0',
        AIVYX_CONFIRM_DESTRUCTIVE: 'off',
        AIVYX_TURN_BUDGET_MS: '1500',
      },
      projectRoot,
    );
    expect(c).toMatchObject({ capabilities: ['fs.read:/srv/**', 'llm.call'], restPort: 0, confirmFirst: [], turnBudgetMs: 1500 });
    expect(loadConfig({ AIVYX_CONFIRM_FIRST: '' }, projectRoot).confirmFirst).toEqual([]);
    expect(loadConfig({ AIVYX_CONFIRM_FIRST: 'fs.delete' }, projectRoot).confirmFirst).toEqual(['fs.delete']);
  });

  it('reads the specialists (issue 33): the shipped two by default, a JSON list or a file; a bad one is refused by name', () => {
    const home = mkdtempSync(join(tmpdir(), 'aivyx-specialists-'));
    const shipped = loadConfig({ AIVYX_HOME: home }, projectRoot).specialists;
    expect(shipped.map((s) => s.name)).toEqual(['researcher', 'writer']);
    expect(shipped[1]!.capabilities).toContain(`fs.write:${join(home, 'workspace', 'notes')}/**`);
    const one = '[{"name":"summarizer","instructions":"Summarize.","capabilities":["memory.read"]}]';
    expect(loadConfig({ AIVYX_SPECIALISTS: one }, projectRoot).specialists.map((s) => s.name)).toEqual(['summarizer']);
    const file = join(home, 'specialists.json');
    writeFileSync(file, one);
    expect(loadConfig({ AIVYX_SPECIALISTS: file }, projectRoot).specialists).toHaveLength(1);
    expect(refusal({ AIVYX_SPECIALISTS: '[{"name":"x","instructions":"y","capabilities":["shell.exce"]}]' }).message).toMatch(
      /^AIVYX_SPECIALISTS=.*specialists: 0\.capabilities\.0: "shell\.exce" is not a valid scope/,
    );
    expect(loadConfig({}, projectRoot).capabilities).toContain('agent.delegate');
    expect(loadConfig({}, projectRoot).capabilities).toContain('agent.terminate');
  });

  it("believes only configured MCP servers' declarations (AIVYX_MCP_TRUST_HINTS); a misspelt one is refused by name", () => {
    const servers = '[{"name":"mail","transport":"stdio","command":"mail-mcp"}]';
    expect(loadConfig({ AIVYX_MCP_SERVERS: servers, AIVYX_MCP_TRUST_HINTS: 'mail' }, projectRoot).mcpTrustHints).toEqual(['mail']);
    expect(loadConfig({}, projectRoot).mcpTrustHints).toEqual([]);
    const e = refusal({ AIVYX_MCP_SERVERS: servers, AIVYX_MCP_TRUST_HINTS: 'mial' });
    expect(e.message).toBe('AIVYX_MCP_TRUST_HINTS: no MCP server named "mial"');
    expect(e.hint).toBe('configured servers: mail');
  });

  it('refuses a malformed capability, port or duration, naming the variable and its value', () => {
    expect(refusal({ AIVYX_CAPABILITIES: 'fs.raed,llm.call' }).message).toBe(
      'AIVYX_CAPABILITIES="fs.raed,llm.call": unknown scope base "fs.raed" (did you mean fs.read?)',
    );
    expect(refusal({ AIVYX_TEMPORAL_PORT: '72330' }).message).toBe(
      'AIVYX_TEMPORAL_PORT="72330": not a port (0–65535, 0 for any free port)',
    );
    expect(refusal({ AIVYX_REST_PORT: 'eighty' }).message).toMatch(/^AIVYX_REST_PORT="eighty": not a port/);
    expect(refusal({ AIVYX_TURN_BUDGET_MS: '5 minutes' }).message).toBe(
      'AIVYX_TURN_BUDGET_MS="5 minutes": must be a number of milliseconds ≥ 1',
    );
    expect(refusal({ AIVYX_CONFIRM_DESTRUCTIVE: 'maybe' }).message).toMatch(/^AIVYX_CONFIRM_DESTRUCTIVE="maybe": must be on or off/);
    // Below the tasks a worker runs at once, the cache would evict workflows in the middle of their turn.
    expect(refusal({ AIVYX_WORKFLOW_CACHE: '10' }).message).toBe('AIVYX_WORKFLOW_CACHE="10": must be a number of workflows ≥ 40');
    expect(loadConfig({ AIVYX_WORKFLOW_CACHE: '500' }, projectRoot).workflowCache).toBe(500);
    expect(loadConfig({}, projectRoot).workflowCache).toBe(100);
    // A typo in the confirm-first list would silently let a destructive tool run unasked.
    expect(refusal({ AIVYX_CONFIRM_FIRST: 'shell.exce' }).message).toMatch(
      /^AIVYX_CONFIRM_FIRST="shell.exce": "shell.exce" is not a tool id/,
    );
    expect(refusal({ AIVYX_LLM: 'gpt-4o' }).message).toMatch(/^AIVYX_LLM="gpt-4o": must be scripted:<file>, openai:<model>/);
    expect(refusal({ TEMPORAL_ADDRESS: 'http://temporal:7233' }).message).toMatch(
      /^TEMPORAL_ADDRESS="http:\/\/temporal:7233": must be host:port/,
    );
    expect(refusal({ AIVYX_TELEGRAM_WEBHOOK_PORT: '-1' }).message).toMatch(/^AIVYX_TELEGRAM_WEBHOOK_PORT="-1": not a port/);
    // The attachment expiry: a duration as missions write them, a month by default, never zero.
    expect(loadConfig({}, projectRoot).env.AIVYX_ATTACHMENT_TTL).toBe(30 * 86_400_000);
    expect(loadConfig({ AIVYX_ATTACHMENT_TTL: '12h' }, projectRoot).env.AIVYX_ATTACHMENT_TTL).toBe(12 * 3_600_000);
    expect(refusal({ AIVYX_ATTACHMENT_TTL: '30 days' }).message).toMatch(/^AIVYX_ATTACHMENT_TTL="30 days": invalid duration/);
    expect(refusal({ AIVYX_ATTACHMENT_TTL: '0d' }).message).toMatch(/^AIVYX_ATTACHMENT_TTL="0d": must be a positive duration/);
  });

  it('names every bad variable at once, and never echoes a secret or a password', () => {
    const e = refusal({
      AIVYX_UI_PORT: 'x',
      AIVYX_MCP_SERVERS: '[{"name":"a","transport":"http","url":"ftp://x","headers":{"authorization":"Bearer s3cret"}}]',
      DATABASE_URL: 'mysql://me:hunter2@db/x',
    });
    expect(e.message).toMatch(/^invalid configuration:/);
    expect(e.message).toContain('AIVYX_UI_PORT="x"');
    expect(e.message).toContain('AIVYX_MCP_SERVERS=(value hidden)');
    expect(e.message).toContain('DATABASE_URL="mysql://me:***@db/x"');
    expect(e.message).not.toMatch(/s3cret|hunter2/);
    expect(e.detail).toEqual({ variables: ['DATABASE_URL', 'AIVYX_UI_PORT', 'AIVYX_MCP_SERVERS'] });
    expect(e.hint).toMatch(/aivyx config/);
  });

  it('parses every variable of the table with nothing set (each has a default or is optional)', () => {
    const { values, sources } = parseEnv({});
    expect(Object.keys(values).sort()).toEqual(Object.keys(ENV_TABLE).sort());
    expect(new Set(Object.values(sources))).toEqual(new Set(['default']));
  });
});

describe('aivyx config', () => {
  it('prints each variable with its value and source; secrets only as set/unset', () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AIVYX_HOME: '/tmp/aivyx-config-test',
      AIVYX_PASSPHRASE: 'correct horse',
      AIVYX_LLM_API_KEY: 'sk-live-123',
      DATABASE_URL: 'postgres://app:pw123@db.internal:5432/aivyx',
      AIVYX_REST_PORT: '9999',
    };
    delete env.AIVYX_PASSPHRASE_FILE;
    const r = aivyx(['config', '--json'], env);
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; value: string; source: string });
    expect(rows.map((x) => x.name)).toEqual(Object.keys(ENV_TABLE));
    const row = (name: string) => rows.find((x) => x.name === name);
    expect(row('AIVYX_PASSPHRASE')).toMatchObject({ value: 'set', source: 'env' });
    expect(row('AIVYX_PASSPHRASE_FILE')).toMatchObject({ value: 'unset', source: 'default' });
    expect(row('AIVYX_LLM_API_KEY')).toMatchObject({ value: 'set', source: 'env' });
    expect(row('DATABASE_URL')).toMatchObject({ value: 'postgres://app:***@db.internal:5432/aivyx', source: 'env' });
    expect(row('AIVYX_REST_PORT')).toMatchObject({ value: '9999', source: 'env' });
    expect(row('AIVYX_TEMPORAL_PORT')).toMatchObject({ value: '7233', source: 'default' });
    expect(r.stdout).not.toMatch(/correct horse|sk-live-123|pw123/);
    const text = aivyx(['config'], { ...env, AIVYX_TEMPORAL_PORT: 'nope' });
    expect(text.status).toBe(1);
    expect(text.stdout).toMatch(/AIVYX_TEMPORAL_PORT +nope +\(env\)\n +✗ AIVYX_TEMPORAL_PORT="nope": not a port/);
    expect(text.stdout).not.toMatch(/correct horse|sk-live-123|pw123/);
  }, 60_000);

  it('describes an empty environment from the defaults alone', () => {
    expect(describeEnv({}).every((r) => r.source === 'default' && !r.error)).toBe(true);
  });
});

describe('a bad configuration stops aivyx before anything starts', () => {
  for (const [name, value, command] of [
    ['AIVYX_CAPABILITIES', 'fs.read,shell.run', ['up']],
    ['AIVYX_TEMPORAL_PORT', '123456', ['up']],
    ['AIVYX_TURN_BUDGET_MS', 'soon', ['chat', '--standalone', '-m', 'hello']],
    ['AIVYX_TELEGRAM_ALLOWLIST', '@alice', ['up']],
  ] as const) {
    it(`${name}=${value} (aivyx ${command.join(' ')}): refused by name and value, no database, no dev server, no lock`, async () => {
      const home = mkdtempSync(join(tmpdir(), 'aivyx-badconfig-'));
      const env = await cliEnv(home, join(projectRoot, 'docs/examples/demo-script.json'), {
        [name]: value,
        ...(name === 'AIVYX_TELEGRAM_ALLOWLIST' ? { AIVYX_TELEGRAM_TOKEN_SECRET: 'tg' } : {}),
      });
      const r = aivyx([...command], env);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`${name}="${value}"`);
      expect(r.stderr).toMatch(/aivyx config/);
      // Nothing was opened or started: no PGlite directory, no dev server database or log, no lock.
      expect(readdirSync(home)).toEqual([]);
      expect(existsSync(join(home, 'pglite'))).toBe(false);
      expect(existsSync(join(home, 'temporal.sqlite'))).toBe(false);
    }, 60_000);
  }
});
