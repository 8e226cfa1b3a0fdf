/** Starts test/support/worker-process.ts in a child process and resolves once it polls. */
import { spawn, type ChildProcess } from 'node:child_process';

/** The worker child with `env` added to this process's environment (DATABASE_URL, AIVYX_TASK_QUEUE, …). */
export function startWorkerProcess(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => d.toString().includes('worker ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`worker exited early (${code})`)));
  });
}
