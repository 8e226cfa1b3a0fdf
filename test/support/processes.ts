/** Process checks for tests that kill things. */
import { readFileSync } from 'node:fs';

/**
 * True while a process with this pid exists and is not a zombie (an orphan killed in a container
 * may linger as a zombie until init reaps it: it has exited, so it counts as gone).
 */
export function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
