/**
 * The owner's daily audit digest through the real Telegram deliverer (grammY over HTTP against the
 * Bot API emulator, outbox in sealed storage): one message a day holding a checkpoint that opens
 * under the install's key, nothing new on a second look the same day.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { createTelegramDeliverer } from '../../channels/telegram/delivery.js';
import {
  appendAuditEntry,
  createAuditService,
  openCheckpoint,
  parseAuditDigestTarget,
  splitNotes,
  startAuditDigest,
  witnessPath,
} from '../../infra/audit/index.js';
import type { OpenDatabase } from '../../infra/db/index.js';
import { openKeyring } from '../../infra/keyring.js';
import { SealedStorage } from '../../infra/storage/index.js';
import { startBotApiEmulator, type BotApiEmulator } from '../support/bot-api-emulator.js';
import { openStorageBackends } from '../support/postgres.js';

const OWNER = 424242;
let s: OpenDatabase;
let tg: BotApiEmulator;

beforeAll(async () => {
  s = await openStorageBackends()[0]!.open();
  tg = await startBotApiEmulator('777001:TEST-token');
});
afterAll(async () => {
  await tg?.close();
  await s?.close();
});

describe('the audit digest', () => {
  it("sends the day's checkpoint to the owner once a day, and says so when the channel is missing", async () => {
    const master = await openKeyring(s.db, 'digest passphrase', { kdfParams: { m: 256, t: 1, p: 1 } });
    const audit = createAuditService({
      db: s.db,
      auditKey: master.subkey('audit'),
      checkpointSeed: master.subkey('audit_checkpoint'),
      witnessPath: witnessPath(mkdtempSync(join(tmpdir(), 'aivyx-digest-'))),
    });
    await appendAuditEntry(s.db, master.subkey('audit'), {
      idemKey: 'k1',
      event: { type: 'TurnEnded', turnId: 't1', outcome: 'Completed', toolCallsMade: 0, durationMs: 1 },
    });
    const deliveries = new DeliveryRegistry();
    const lines: string[] = [];
    let day = new Date('2026-12-03T08:00:00Z');
    const target = parseAuditDigestTarget(`telegram:${OWNER}`)!;
    const digest = startAuditDigest({
      service: audit,
      deliveries,
      target,
      now: () => day,
      firstAfterMs: 3_600_000,
      log: (l) => lines.push(l),
    });
    try {
      // No Telegram channel on this worker (yet): nothing sent, said once.
      await digest.tick();
      await digest.tick();
      expect(lines).toEqual([`audit digest to telegram:${OWNER} not sent: channel telegram is not running here or cannot send messages`]);

      const store = SealedStorage.open(s.db, master).domain('channel_state');
      deliveries.register(
        'telegram',
        createTelegramDeliverer({
          api: new Api(tg.token, { apiRoot: tg.apiRoot }),
          botId: 777001,
          store,
          closeStream: async () => undefined,
          signal: new AbortController().signal,
          log: () => undefined,
        }),
      );
      await digest.tick();
      await digest.tick();
      const toOwner = () => [...tg.sent.values()].filter((m) => m.chatId === OWNER).map((m) => m.text);
      expect(toOwner()).toHaveLength(1);
      const text = toOwner()[0]!;
      expect(text).toMatch(/^aivyx audit checkpoint, 2026-12-03\n/);
      expect(text).toContain(`verifier key: ${audit.pubkey().vkey}`);
      // The message holds a checkpoint of this log that opens under this install's key.
      const note = splitNotes(text.slice(text.indexOf(audit.verifier.origin), text.indexOf('\nverifier key')) + '\n').notes[0]!;
      expect(openCheckpoint(note.text, audit.verifier, 'digest')).toMatchObject({ size: 1 });

      // The next day: a new one; a restarted digest the same day sends nothing (the outbox remembers).
      day = new Date('2026-12-04T08:00:00Z');
      await appendAuditEntry(s.db, master.subkey('audit'), {
        idemKey: 'k2',
        event: { type: 'TurnEnded', turnId: 't2', outcome: 'Completed', toolCallsMade: 0, durationMs: 1 },
      });
      await digest.tick();
      const again = startAuditDigest({
        service: audit,
        deliveries,
        target,
        now: () => day,
        firstAfterMs: 3_600_000,
        log: (l) => lines.push(l),
      });
      await again.tick();
      again.stop();
      expect(toOwner()).toHaveLength(2);
      expect(toOwner()[1]).toMatch(/^aivyx audit checkpoint, 2026-12-04\n[\s\S]*\n2\n/);
      expect(lines).toHaveLength(1);
    } finally {
      digest.stop();
    }
  });

  it('refuses a malformed target', () => {
    expect(() => parseAuditDigestTarget('123456')).toThrow(/AIVYX_AUDIT_DIGEST must be <channel>:<address>/);
    expect(parseAuditDigestTarget(undefined)).toBeUndefined();
    expect(parseAuditDigestTarget('email:me@example.org')).toEqual({ channel: 'email', to: 'me@example.org' });
  });
});
