/**
 * The periodic checkpoint writer of a running stack: a checkpoint after every commit that holds a
 * `TurnEnded` or `MissionEnded`, after every `every` entries, every `seconds` seconds if the log grew
 * (which also covers other processes' appends), and once at start. Writes are coalesced: at most
 * one in flight and one queued behind it.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { onAuditCommit } from './appender.js';
import type { AuditService } from './audit-service.js';

/** Event types whose commit is followed by a checkpoint. */
const CHECKPOINTED_EVENTS = ['TurnEnded', 'MissionEnded'];

/** Options of `startAuditCheckpoints`. */
export interface AuditCheckpointsOptions {
  db: Kysely<Database>;
  service: Pick<AuditService, 'checkpoint'>;
  /** A checkpoint at least every this many entries (0: only on ends and the timer). */
  every: number;
  /** A checkpoint at least every this many seconds while the log grows (0: no timer). */
  seconds: number;
  /** Where alarms go (a refused checkpoint, an unwritable witness file); repeated ones once. */
  log: (line: string) => void;
}

/** A running writer. */
export interface AuditCheckpoints {
  /** Resolves once every write triggered so far has finished. */
  flush(): Promise<void>;
  /** Stops listening and writes one last checkpoint over everything committed so far. */
  stop(): Promise<void>;
}

/** Starts the writer (see the module comment). */
export function startAuditCheckpoints(opts: AuditCheckpointsOptions): AuditCheckpoints {
  let lastSize = -1;
  let running: Promise<void> | undefined;
  let again = false;
  let lastAlarm = '';
  let stopped = false;

  const write = async (): Promise<void> => {
    do {
      again = false;
      try {
        lastSize = (await opts.service.checkpoint()).size;
        lastAlarm = '';
      } catch (e) {
        const line = `audit: ALARM: ${e instanceof Error ? e.message : String(e)}`;
        if (line !== lastAlarm) opts.log(line);
        lastAlarm = line;
      }
    } while (again && !stopped);
  };
  const trigger = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = write().finally(() => (running = undefined));
  };

  const unsubscribe = onAuditCommit(opts.db, (c) => {
    if (CHECKPOINTED_EVENTS.some((t) => c.eventTypes.has(t)) || (opts.every > 0 && c.size - lastSize >= opts.every)) trigger();
  });
  const timer = opts.seconds > 0 ? setInterval(trigger, opts.seconds * 1000) : undefined;
  timer?.unref();
  trigger();

  return {
    async flush() {
      while (running) await running;
    },
    async stop() {
      unsubscribe();
      if (timer) clearInterval(timer);
      trigger();
      while (running) await running;
      stopped = true;
    },
  };
}
