/**
 * `aivyx audit pubkey|prove|consistency|verify` as real processes without a running stack: the CLI
 * opens PostgreSQL and the keys itself and writes checkpoints to the witness file in AIVYX_HOME.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { appendAuditEntry, createAuditService, witnessPath } from '../../infra/audit/index.js';
import { openDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { aivyx, cliEnv } from '../support/cli-process.js';
import { createTestDatabase } from '../support/postgres.js';

describe('aivyx audit without a running stack', () => {
  it('prints the checkpoint key, proves entries and growth, and names a rolled-back log', async () => {
    const pg = await createTestDatabase('audit_cli');
    const { db, close } = await openDatabase({ databaseUrl: pg.url });
    const home = mkdtempSync(join(tmpdir(), 'aivyx-audit-cli-'));
    try {
      const master = await openKeyring(db, 'audit cli passphrase', { kdfParams: { m: 256, t: 1, p: 1 } });
      const append = async (from: number, to: number) => {
        for (let i = from; i <= to; i++)
          await appendAuditEntry(db, master.subkey('audit'), {
            idemKey: `k${i}`,
            event: { type: 'TurnEnded', turnId: `t${i}`, outcome: 'Completed', toolCallsMade: 0, durationMs: i },
          });
      };
      await append(1, 4);
      const head4 = await db.selectFrom('audit_head').select(['seq', 'mac', 'frontier']).where('id', '=', 1).executeTakeFirstOrThrow();
      const env = {
        ...(await cliEnv(home, join(home, 'unused-script.json'))),
        DATABASE_URL: pg.url,
        AIVYX_PASSPHRASE: 'audit cli passphrase',
      };
      const expected = createAuditService({
        db,
        auditKey: master.subkey('audit'),
        checkpointSeed: master.subkey('audit_checkpoint'),
        witnessPath: join(home, 'unused'),
      }).pubkey();

      const pub = aivyx(['audit', 'pubkey'], env);
      expect(pub.stdout).toBe(`${expected.vkey}\n`);

      const prove = aivyx(['audit', 'prove', '2', '--json'], env);
      expect(prove.status).toBe(0);
      expect(JSON.parse(prove.stdout)).toMatchObject({
        seq: 2,
        leafIndex: 1,
        treeSize: 4,
        proof: [expect.any(String), expect.any(String)],
      });
      const old = join(home, 'old.txt');
      writeFileSync(old, readFileSync(witnessPath(home), 'utf8'));

      await append(5, 9);
      const grew = aivyx(['audit', 'consistency', old], env);
      expect(grew.stdout).toMatch(/^the log only grew: 4 → 9 entries\n/);
      const ok = aivyx(['audit', 'verify'], env);
      expect(ok.status).toBe(0);
      expect(ok.stdout).toContain(
        `audit checkpoints OK: 2 agree with the log; the newest covers 9 entries (#2 of ${witnessPath(home)} (line 8))`,
      );

      // A restore of the database to its state at entry 4.
      await sql`delete from audit_entries where seq > 4`.execute(db);
      await db.updateTable('audit_head').set(head4).where('id', '=', 1).execute();
      const bad = aivyx(['audit', 'verify'], env);
      expect(bad.status).toBe(1);
      expect(bad.stdout).toContain(`audit checkpoint FAILED: checkpoint #2 of ${witnessPath(home)} (line 8) (size 9, signed `);
      expect(bad.stdout).toContain('is ahead of the log, which has 4 entries: entries 5–9 were removed');
    } finally {
      await close();
      await pg.drop();
    }
  }, 180_000);
});
