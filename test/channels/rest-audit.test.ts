/**
 * The audit routes of the REST channel (`aivyx audit …` while `aivyx up` runs) over a real database,
 * driven through the CLI's own parsing, REST client and printing.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAuditCommand, printAudit, restAuditPort, runAuditCommand } from '../../channels/cli/audit-commands.js';
import { startRestServer } from '../../channels/rest/rest-server.js';
import type { TurnGateway } from '../../channels/turn-gateway.js';
import { appendAuditEntry, createAuditService, witnessPath, type AuditService } from '../../infra/audit/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { openStorageBackends } from '../support/postgres.js';

const key = new Uint8Array(32).fill(4);
const token = randomBytes(16).toString('hex');
const home = mkdtempSync(join(tmpdir(), 'aivyx-rest-audit-'));
let s: OpenDatabase;
let audit: AuditService;
let rest: Awaited<ReturnType<typeof startRestServer>>;

beforeAll(async () => {
  s = await openStorageBackends()[0]!.open();
  audit = createAuditService({ db: s.db, auditKey: key, checkpointSeed: new Uint8Array(32).fill(5), witnessPath: witnessPath(home) });
  // The audit routes never touch the turn gateway.
  rest = await startRestServer({
    gateway: {} as TurnGateway,
    token,
    audit,
  });
});
afterAll(async () => {
  await rest?.stop();
  await s?.close();
});

/** `aivyx audit <args>` against the running REST channel: exit status and what it printed. */
async function cli(...args: string[]): Promise<{ status: number; out: string }> {
  let out = '';
  const cmd = await parseAuditCommand(args, async () => '');
  const status = printAudit(cmd, await runAuditCommand(cmd, restAuditPort({ url: rest.url, token })), (t) => (out += t));
  return { status, out };
}

async function append(from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++)
    await appendAuditEntry(s.db, key, {
      idemKey: `k${i}`,
      event: { type: 'TurnEnded', turnId: `t${i}`, outcome: 'Completed', toolCallsMade: 0, durationMs: i },
    });
}

describe('aivyx audit over the REST channel', () => {
  it('pubkey, prove, consistency and verify, then a rewound log named by the witness', async () => {
    await append(1, 5);
    const at5 = await s.db.selectFrom('audit_head').select(['seq', 'mac', 'frontier']).where('id', '=', 1).executeTakeFirstOrThrow();
    const pub = await cli('pubkey');
    expect(pub.out).toBe(`${audit.pubkey().vkey}\n`);
    expect(await cli('verify')).toEqual({
      status: 0,
      out: `audit chain OK: 5 entries, head at seq 5\naudit tree OK: root ${(await audit.verify()).root} at size 5\naudit checkpoints: none — no checkpoint found (${witnessPath(home)} is missing or empty): a truncated tail cannot be detected\n`,
    });

    const proof = await cli('prove', '3');
    expect(proof.out).toMatch(
      /^entry 3 is leaf 2 of the tree of 5 entries\nleaf bytes \(the entry's MACed body\): \{"event":\{.*"turnId":"t3".*\},"idemKey":"k3","recordedAt":"[^"]+","seq":3\}\n/,
    );
    expect(proof.out).toContain('inclusion proof (RFC 9162 §2.1.3, leaf to root, 3 hashes):');
    const old = join(home, 'old-checkpoint');
    copyFileSync(witnessPath(home), old);

    await append(6, 8);
    const grew = await cli('consistency', old);
    expect(grew.out).toMatch(/^the log only grew: 5 → 8 entries\nconsistency proof \(RFC 9162 §2.1.4, \d+ hashes\):\n/);
    expect((await cli('verify', '--json')).out).toContain('"ok":true');
    expect((await cli('verify')).out).toContain(
      `audit checkpoints OK: 2 agree with the log; the newest covers 8 entries (#2 of ${witnessPath(home)} (line 8))`,
    );
    expect((await cli('verify', '--checkpoint', old)).out).toContain('audit checkpoints OK: 3 agree with the log');

    // Another install's checkpoint, passed in.
    const other = createAuditService({
      db: s.db,
      auditKey: key,
      checkpointSeed: new Uint8Array(32).fill(6),
      witnessPath: join(home, 'other-witness'),
    });
    writeFileSync(join(home, 'theirs'), (await other.checkpoint()).text);
    const foreign = await cli('verify', '--checkpoint', join(home, 'theirs'));
    expect(foreign.status).toBe(1);
    expect(foreign.out).toBe(
      `audit checkpoint FAILED: checkpoint ${join(home, 'theirs')} is for log ${other.verifier.origin}, not this one (${audit.verifier.origin}): a checkpoint from another install\n`,
    );
    await expect(cli('consistency', join(home, 'theirs'))).rejects.toMatchObject({
      message: expect.stringContaining('a checkpoint from another install'),
    });

    // Entries 6–8 deleted and the head rewound to entry 5 (with its tree edge): only the witness knows.
    await sql`delete from audit_entries where seq > 5`.execute(s.db);
    await s.db.updateTable('audit_head').set(at5).where('id', '=', 1).execute();
    const rewound = await cli('verify');
    expect(rewound.status).toBe(1);
    expect(rewound.out).toMatch(
      new RegExp(
        `^audit chain OK: 5 entries\naudit tree OK over those 5 entries\naudit checkpoint FAILED: checkpoint #2 of ${witnessPath(home)} \\(line 8\\) \\(size 8, signed [^)]+\\) is ahead of the log, which has 5 entries: entries 6–8 were removed`,
      ),
    );
    await expect(cli('prove', '1')).rejects.toMatchObject({
      message: expect.stringMatching(/^refusing to sign a checkpoint: the log has 5 entries but the newest witnessed checkpoint has 8/),
    });
  });

  it('bad input is a 4xx with the reason', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const bad = await fetch(`${rest.url}/v1/audit/prove?seq=x`, { headers: auth });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: { message: expect.stringContaining('field "seq": must be an entry\'s sequence number (1, 2, …)') },
    });
    const res = await fetch(`${rest.url}/v1/audit/consistency`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { message: expect.stringContaining('field "checkpoint": must be the text of a signed checkpoint') },
    });
  });
});
