/**
 * `aivyx inbox` over the REST channel (issue "the everyday conversation"): replies that could not
 * reach the chat they were asked in are kept sealed for the owner, listed oldest first with why,
 * and dismissed by id (or a unique start of it). Real PostgreSQL, a real sealed store; the
 * Telegram test shows a refused reply landing here.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboxPort } from '../../activities/ports.js';
import { runInboxCommand } from '../../channels/cli/inbox-commands.js';
import type { RestTarget } from '../../channels/cli/rest-client.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import type { TurnGateway } from '../../channels/turn-gateway.js';
import { openDatabase, type Database } from '../../infra/db/index.js';
import { createInbox, heldReplyId } from '../../infra/inbox.js';
import { openKeyring } from '../../infra/keyring.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { createTestDatabase } from '../support/postgres.js';
import { TEST_KDF, TEST_PASSPHRASE } from '../support/turn-harness.js';

const token = randomBytes(16).toString('hex');
let pg: Awaited<ReturnType<typeof createTestDatabase>>;
let db: Kysely<Database>;
let close: () => Promise<void>;
let inbox: InboxPort;
let target: RestTarget;
let stop: () => Promise<void>;

beforeAll(async () => {
  pg = await createTestDatabase('rest_inbox');
  ({ db, close } = await openDatabase({ databaseUrl: pg.url }));
  const master = await openKeyring(db, TEST_PASSPHRASE, { kdfParams: TEST_KDF });
  inbox = createInbox(SealedStorage.open(db, master).domain('sessions'));
  const server = await startRestServer({
    gateway: {} as TurnGateway,
    token,
    audit: { verify: async () => null, tail: async () => [] },
    inbox,
  });
  target = { url: server.url, token };
  stop = () => server.stop();
});
afterAll(async () => {
  await stop?.();
  await close?.();
  await pg?.drop();
});

const run = async (...args: string[]): Promise<{ code: number; out: string }> => {
  let out = '';
  const code = await runInboxCommand(args, target, (s) => (out += s));
  return { code, out };
};

describe('the owner’s inbox of undelivered replies', () => {
  it('empty, then two held replies oldest first with why; holding a turn again keeps one entry; dismiss by a prefix', async () => {
    expect(await run()).toEqual({ code: 0, out: 'the inbox is empty\n' });
    const later = { turnId: 'turn/email/m-2', at: Date.UTC(2026, 11, 4, 9), channel: 'email', reason: 'SMTP 550 mailbox unavailable' };
    const earlier = {
      turnId: 'turn/telegram/1_42_7',
      at: Date.UTC(2026, 11, 4, 8),
      channel: 'telegram',
      reason: 'Telegram refused the reply',
    };
    await inbox.hold({
      ...later,
      outcome: { status: 'Completed', finalMessage: 'the report is attached', toolCallsMade: 0, durationMs: 5 },
    });
    await inbox.hold({ ...earlier, outcome: { status: 'Completed', finalMessage: 'first draft', toolCallsMade: 0, durationMs: 5 } });
    await inbox.hold({ ...earlier, outcome: { status: 'Completed', finalMessage: 'second draft', toolCallsMade: 0, durationMs: 5 } }); // a retried hold
    const listed = await run();
    expect(listed.code).toBe(0);
    const [first, second] = listed.out.split('\n\n');
    expect(first).toBe(
      `${heldReplyId(earlier.turnId)}  2026-12-04T08:00:00.000Z  not delivered to telegram: Telegram refused the reply (turn ${earlier.turnId})\n  second draft`,
    );
    expect(second).toContain(`${heldReplyId(later.turnId)}  2026-12-04T09:00:00.000Z  not delivered to email: SMTP 550`);
    expect(second).toContain('the report is attached');
    const json = (await run('--json')).out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turnId: string });
    expect(json.map((r) => r.turnId)).toEqual([earlier.turnId, later.turnId]);

    expect(await run('dismiss', heldReplyId(earlier.turnId).slice(0, 6))).toEqual({ code: 0, out: 'dismissed\n' });
    expect(await run('dismiss', heldReplyId(earlier.turnId))).toEqual({ code: 1, out: 'no such inbox entry\n' });
    expect((await inbox.list()).map((r) => r.turnId)).toEqual([later.turnId]);
  });

  it('a notice a CLI mission left for the owner reads as a notice, not as a reply that was not delivered', async () => {
    // As workflows/mission-workflow.ts holds a notice of a mission with no chat to send it to.
    const missionId = 'mission-0f0e0d0c-0000-4000-8000-00000000abcd';
    const turnId = `${missionId}/step-1/run-1/notice`;
    await inbox.hold({
      turnId,
      at: Date.UTC(2026, 11, 4, 10),
      channel: 'cli',
      reason: `a notice from mission ${missionId}`,
      outcome: { status: 'Completed', finalMessage: 'call the bank', toolCallsMade: 0, durationMs: 0 },
    });
    const shown = (await run()).out;
    expect(shown).toContain(
      `${heldReplyId(turnId)}  2026-12-04T10:00:00.000Z  notice from mission ${missionId} (turn ${turnId})\n  call the bank\n`,
    );
    expect(shown.split('\n\n').find((e) => e.includes(missionId))).not.toMatch(/not delivered/);
    expect(await run('dismiss', heldReplyId(turnId))).toEqual({ code: 0, out: 'dismissed\n' });
  });

  it('without the bearer token the inbox is neither shown nor changed', async () => {
    const before = await inbox.list();
    const list = await fetch(`${target.url}/v1/inbox`);
    expect(list.status).toBe(401);
    expect(await list.text()).not.toContain('turn/');
    const dismiss = await fetch(`${target.url}/v1/inbox/${before[0]?.id ?? 'abcd'}/dismiss`, { method: 'POST' });
    expect(dismiss.status).toBe(401);
    expect(await inbox.list()).toEqual(before);
  });

  it('a malformed id is refused with a clear error and removes nothing', async () => {
    const before = await inbox.list();
    await expect(run('dismiss', '../../x')).rejects.toThrow(/is not an inbox id/);
    await expect(run('dismiss')).rejects.toThrow(/inbox dismiss needs exactly one id/);
    await expect(run('empty')).rejects.toThrow(/unknown inbox command "empty"/);
    expect(await inbox.list()).toEqual(before);
  });
});
