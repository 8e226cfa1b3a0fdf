/**
 * The owner's daily audit digest: once per calendar day (UTC), a fresh signed checkpoint sent to the
 * owner on a channel they chose (`AIVYX_AUDIT_DIGEST=telegram:<chat id>`, or any channel whose
 * deliverer can `send`), so a copy of the log's state lives outside this machine. Sends go through
 * the channel's outbox under `audit-digest/<date>`: a restart the same day sends nothing new.
 */
import type { DeliveryRegistry } from '../../activities/delivery-activities.js';
import { AivyxError } from '../../core/errors.js';
import type { AuditService } from './audit-service.js';

/** Where the digest goes: a channel name and that channel's address form (chat id, e-mail address). */
export interface AuditDigestTarget {
  channel: string;
  to: string;
}

/** Parses `AIVYX_AUDIT_DIGEST` (`<channel>:<address>`); undefined when unset. */
export function parseAuditDigestTarget(raw: string | undefined): AuditDigestTarget | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const m = /^([a-z][a-z0-9_-]*):(.+)$/.exec(raw.trim());
  if (!m)
    throw new AivyxError('Config', `AIVYX_AUDIT_DIGEST must be <channel>:<address>, got "${raw}"`, {
      hint: 'e.g. telegram:123456789 (your Telegram user id)',
    });
  return { channel: m[1] as string, to: m[2] as string };
}

/** Options of `startAuditDigest`. */
export interface AuditDigestOptions {
  service: Pick<AuditService, 'checkpoint' | 'pubkey'>;
  deliveries: DeliveryRegistry;
  target: AuditDigestTarget;
  /** How often to look whether today's digest is due (default: hourly; the first look is after `firstAfterMs`). */
  intervalMs?: number;
  /** Delay of the first look, so channels started after the audit writer have registered (default 60 s). */
  firstAfterMs?: number;
  now?: () => Date;
  log: (line: string) => void;
}

/** The digest message: what it is, how to use it, the checkpoint and the key to check it with. */
export function auditDigestText(day: string, checkpoint: string, vkey: string): string {
  return [
    `aivyx audit checkpoint, ${day}`,
    '',
    "Keep this message. Should the assistant's database ever be rolled back or its audit log cut short, `aivyx audit verify --checkpoint FILE` (FILE holding the lines from the checkpoint on) says so.",
    '',
    checkpoint.trimEnd(),
    '',
    `verifier key: ${vkey}`,
  ].join('\n');
}

/** Starts the digest; `tick` runs one look now (tests), `stop` ends it. */
export function startAuditDigest(opts: AuditDigestOptions): { tick(): Promise<void>; stop(): void } {
  const now = opts.now ?? (() => new Date());
  let sentDay = '';
  let lastProblem = '';
  const tick = async () => {
    const day = now().toISOString().slice(0, 10);
    if (day === sentDay) return;
    try {
      const send = opts.deliveries.get(opts.target.channel)?.send;
      if (!send) throw new AivyxError('Channel', `channel ${opts.target.channel} is not running here or cannot send messages`);
      const cp = await opts.service.checkpoint();
      await send(opts.target.to, auditDigestText(day, cp.text, opts.service.pubkey().vkey), `audit-digest/${day}`);
      sentDay = day;
      lastProblem = '';
    } catch (e) {
      const line = `audit digest to ${opts.target.channel}:${opts.target.to} not sent: ${e instanceof Error ? e.message : String(e)}`;
      if (line !== lastProblem) opts.log(line);
      lastProblem = line;
    }
  };
  let interval: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    void tick();
    interval = setInterval(() => void tick(), opts.intervalMs ?? 3_600_000);
    interval.unref();
  }, opts.firstAfterMs ?? 60_000);
  first.unref();
  return {
    tick,
    stop() {
      clearTimeout(first);
      if (interval) clearInterval(interval);
    },
  };
}
