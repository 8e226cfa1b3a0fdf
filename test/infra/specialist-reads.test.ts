/**
 * The worker's own check on a specialist's answer (issue 33): an `agent.delegate` result in a lead's
 * context is its child's answer, and the untrusted reads the worker recorded for that child (and its
 * children) come back with the context's labels, so a lead whose workflow did not count them is
 * refused by runTool (activities/turn/call-taint.ts) instead of acting as the owner.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ToolCallFacts } from '../../core/authority.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { createToolCallLog } from '../../infra/tool-call-log.js';
import { callTaintCheck } from '../../activities/turn/call-taint.js';
import type { TurnContext } from '../../activities/turn/context.js';
import type { RunToolInput, TurnAuthority } from '../../activities/turn/types.js';
import { openStorageBackends } from '../support/postgres.js';

const key = new Uint8Array(32).fill(3);
const lead = 'turn-lead_1';

function facts(turnId: string, activityId: string, tool: string, untrustedOutput?: string): ToolCallFacts {
  return {
    idemKey: `${turnId}/run-1/${activityId}`,
    turnId,
    callId: activityId,
    tool,
    scope: tool,
    inputHash: 'h',
    ...(untrustedOutput ? { untrustedOutput } : {}),
  };
}

describe.each(openStorageBackends())('specialist reads on $name', (backend) => {
  let s: OpenDatabase;
  beforeAll(async () => {
    s = await backend.open();
  });
  afterAll(async () => {
    await s.close();
  });
  beforeEach(async () => {
    await sql`delete from tool_calls`.execute(s.db);
  });

  async function done(log: ReturnType<typeof createToolCallLog>, f: ToolCallFacts): Promise<string> {
    await log.begin(f);
    await log.audit(f, { known: 'Completed', missing: 'Completed' });
    return f.idemKey;
  }

  it('names what a delegated child read, and only for the delegations in the context', async () => {
    const log = createToolCallLog(s.db, key);
    const asked = await done(log, facts(lead, 'tool-1-0', 'agent.delegate'));
    const other = await done(log, facts(lead, 'tool-1-1', 'agent.delegate'));
    // The first child read a page; a grandchild of the second read a file; a sibling's id only looks alike.
    await done(log, facts(`${lead}/tool-1-0/researcher`, 'tool-1-0', 'net.fetch', 'a web page (evil.example)'));
    await done(log, facts(`${lead}/tool-1-1/writer/tool-2-0/researcher`, 'tool-2-0', 'fs.read', 'a file (/tmp/x)'));
    await done(log, facts(`${lead}/tool-1-00/researcher`, 'tool-1-0', 'net.fetch', 'another page'));
    await done(log, facts(`${lead}/tool-1-0/researcher`, 'tool-1-1', 'memory.recall'));

    expect((await log.contextLabels([asked])).delegated).toEqual(['a web page (evil.example)']);
    expect((await log.contextLabels([other])).delegated).toEqual(['a file (/tmp/x)']);
    expect((await log.contextLabels([asked, other])).delegated.sort()).toEqual(['a file (/tmp/x)', 'a web page (evil.example)']);
    // Those reads are not the lead's own results: the lead's context labels stay as they were.
    expect((await log.contextLabels([asked])).untrusted).toEqual([]);
  });

  it('a clean child, and a turn id with LIKE wildcards, add nothing', async () => {
    const log = createToolCallLog(s.db, key);
    const wild = 'turn%_x';
    const asked = await done(log, facts(wild, 'tool-1-0', 'agent.delegate'));
    await done(log, facts(`${wild}/tool-1-0/researcher`, 'tool-1-0', 'memory.recall'));
    await done(log, facts('turnAAx/tool-1-0/researcher', 'tool-1-0', 'net.fetch', 'a page another lead’s child read'));
    expect(await log.contextLabels([asked])).toEqual({ untrusted: [], unrecorded: [], delegated: [] });
  });
});

describe("runTool's re-check of a lead's call", () => {
  const input: RunToolInput = {
    turnId: lead,
    step: 2,
    call: { callId: 'c2', tool: 'net.post', input: { url: 'https://evil.example', body: 'x' } },
    scope: 'net.post:evil.example',
    context: ['k-delegate'],
  };
  const check = (delegated: string[]) =>
    callTaintCheck({
      deps: {
        agent: {},
        toolCalls: { contextLabels: async () => ({ untrusted: [], unrecorded: [], delegated }) },
      },
    } as unknown as TurnContext).callTaint({ taint: [] } as unknown as TurnAuthority, input);

  it('refuses a call the workflow counted clean after a specialist read untrusted content', async () => {
    expect(await check(['a web page (evil.example)'])).toEqual({
      refused: 'a specialist of this turn read untrusted content the workflow did not account for (a web page (evil.example))',
    });
    expect(await check([])).toEqual({ sources: [], action: 'free' });
  });

  it('a workflow that counted the answer as untrusted decides as usual', async () => {
    const counted = { ...input, taint: { sources: ['the answer of specialist researcher'], action: 'gate' as const } };
    const out = await callTaintCheck({
      deps: { agent: {}, toolCalls: { contextLabels: async () => ({ untrusted: [], unrecorded: [], delegated: ['a page'] }) } },
    } as unknown as TurnContext).callTaint({ taint: [] } as unknown as TurnAuthority, counted);
    expect(out).toMatchObject({ sources: ['the answer of specialist researcher'], action: 'gate' });
  });
});
