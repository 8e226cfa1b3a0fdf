/**
 * What a running stack knows about its dependencies (Temporal, the database, channels): probed
 * continually, reported by `/v1/health`, announced on stderr when one goes down or comes back,
 * and turned into a clear error — naming the dependency and what to do — for a request that
 * needs one that is down.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { AivyxError, type AivyxErrorKind } from '../core/errors.js';

/** The state of one dependency. */
export interface DependencyStatus {
  ok: boolean;
  /** When it entered this state (ISO-8601). */
  since: string;
  /** What it is, e.g. `Temporal dev server at 127.0.0.1:7233` (shown only to token holders). */
  label: string;
  /** Why it is down. */
  detail?: string;
}

/** Every dependency's state; `ok` only when all are up. */
export interface HealthReport {
  ok: boolean;
  dependencies: Record<string, DependencyStatus>;
}

/** How a dependency is described and what a person should do while it is down. */
export interface DependencySpec {
  label: string;
  /** What to do while it is down (the hint of the error a request gets). */
  hint: string;
  /** The error kind a request that needs it gets (Temporal: Channel — it is the daemon link; database: Storage). */
  kind: AivyxErrorKind;
}

/** The health board of one stack. */
export class Health {
  private readonly specs = new Map<string, DependencySpec>();
  private readonly states = new Map<string, DependencyStatus>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly log: (line: string) => void = () => undefined) {}

  /** Adds a dependency, up (registering it again only updates how it is described). */
  register(name: string, spec: DependencySpec): void {
    this.specs.set(name, spec);
    const was = this.states.get(name);
    this.states.set(name, was ? { ...was, label: spec.label } : { ok: true, since: new Date().toISOString(), label: spec.label });
  }

  /** Marks a dependency down (announced once per outage). */
  down(name: string, detail: string): void {
    const spec = this.spec(name);
    const was = this.states.get(name);
    // The first cause of an outage is the telling one (a probe's "no connection" adds nothing).
    if (was && !was.ok) return;
    this.states.set(name, { ok: false, since: new Date().toISOString(), label: spec.label, detail });
    this.log(`${spec.label} is DOWN: ${detail} — ${spec.hint}`);
  }

  /** Marks a dependency up again (announced when it was down). */
  up(name: string): void {
    const spec = this.spec(name);
    const was = this.states.get(name);
    if (was?.ok) return;
    this.states.set(name, { ok: true, since: new Date().toISOString(), label: spec.label });
    if (was) this.log(`${spec.label} is back (down since ${was.since})`);
    for (const wake of this.waiters) wake();
  }

  /** True while `name` is up. */
  isUp(name: string): boolean {
    return this.states.get(name)?.ok ?? true;
  }

  /** The whole board. */
  report(): HealthReport {
    const dependencies = Object.fromEntries(this.states);
    return { ok: [...this.states.values()].every((s) => s.ok), dependencies };
  }

  /** Throws the error a request needing `names` should get while one of them is down. */
  require(...names: string[]): void {
    for (const name of names) {
      const state = this.states.get(name);
      if (state && !state.ok) throw this.unavailable(name, state.detail);
    }
  }

  /** The error for a request that needed `name` while it was down (or found it unreachable). */
  unavailable(name: string, detail?: string, cause?: unknown): AivyxError {
    const spec = this.spec(name);
    return new AivyxError(spec.kind, `${spec.label} is unavailable${detail ? `: ${detail}` : ''}`, {
      hint: spec.hint,
      detail: { dependency: name, unavailable: true },
      cause,
    });
  }

  /** Resolves true once `name` is up, or false after `timeoutMs`. */
  async waitUp(name: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (!this.isUp(name)) {
      const left = end - Date.now();
      if (left <= 0 || signal?.aborted) return false;
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 1_000));
        this.waiters.add(wake);
      });
    }
    return true;
  }

  private spec(name: string): DependencySpec {
    const spec = this.specs.get(name);
    if (!spec) throw new AivyxError('Internal', `unknown dependency ${name}`);
    return spec;
  }
}

/** True when `error` (or one of its causes) says a dependency could not be reached at all. */
export function isUnavailable(error: unknown): boolean {
  for (
    let e = error as { detail?: { unavailable?: unknown }; cause?: unknown } | undefined, depth = 0;
    e && depth < 8;
    e = e.cause as typeof e, depth++
  ) {
    if (e instanceof AivyxError && e.detail?.unavailable === true) return true;
  }
  return false;
}

/**
 * Probes a dependency every `intervalMs` (each probe bounded by `timeoutMs`) and keeps the board
 * current. Returns the function that stops it.
 */
export function watchDependency(
  health: Health,
  name: string,
  probe: () => Promise<unknown>,
  opts: { intervalMs?: number; timeoutMs?: number } = {},
): () => Promise<void> {
  const interval = opts.intervalMs ?? 1_000;
  const timeout = opts.timeoutMs ?? 2_000;
  const stop = new AbortController();
  const loop = (async () => {
    while (!stop.signal.aborted) {
      try {
        await Promise.race([
          probe(),
          delay(timeout, undefined, { signal: stop.signal }).then(() => {
            throw new Error(`no answer within ${timeout / 1000} s`);
          }),
        ]);
        health.up(name);
      } catch (err) {
        if (stop.signal.aborted) break;
        health.down(name, describeCause(err));
      }
      await delay(interval, undefined, { signal: stop.signal }).catch(() => undefined);
    }
  })();
  return async () => {
    stop.abort();
    await loop;
  };
}

/** The innermost useful message of an error chain (e.g. `connect ECONNREFUSED 127.0.0.1:5432`). */
export function describeCause(err: unknown): string {
  let e = err as { message?: unknown; cause?: unknown; code?: unknown; details?: unknown } | undefined;
  let message = err instanceof Error ? err.message : String(err);
  for (let depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (typeof e.details === 'string' && e.details) message = e.details;
    else if (typeof e.message === 'string' && e.message) message = e.message;
  }
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}
