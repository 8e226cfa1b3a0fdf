/** What several `aivyx` commands share: the passphrase, the project root, stdin, the owner's time zone. */
import { promptHidden } from '../../infra/passphrase.js';
import type { AivyxConfig } from '../../infra/config.js';
import { projectRoot } from '../project-root.js';

/** The passphrase for a command that opens the install: at a terminal, a new one asked twice or a wrong one asked again. */
export async function passphrase(config: AivyxConfig): Promise<string> {
  const { unlockingPassphrase } = await import('../../channels/cli/unlock-passphrase.js');
  return unlockingPassphrase(config, (q) => promptHidden(q));
}

/** The modules of the commands that open the database or start a stack (loaded on use). */
export const directCommands = () => import('../../channels/cli/audit-commands.js');

/** The checkout's root folder (the demo script and the Temporal binaries are found from it). */
export const root = projectRoot();

/** The owner's time zone: AIVYX_TIME_ZONE, else the system's (TZ, /etc/localtime). */
export function ownerTimeZone(config: AivyxConfig): string {
  return config.env.AIVYX_TIME_ZONE ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/** All of stdin, as text. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
