/**
 * `aivyx app`: a sign-in link for the owner's app of the running `aivyx up`. The link is minted by
 * the app for whoever holds the REST token (this machine's owner, who can read the data
 * directory), works once and for ten minutes; the command prints it and, on a desktop, opens it.
 */
import { spawn } from 'node:child_process';
import { AivyxError } from '../../core/errors.js';

/** Where the app listens and the REST token that proves the caller is the owner. */
export interface AppCommandTarget {
  appUrl: string | undefined;
  restToken: string;
}

/** Mints a sign-in link, prints it, opens it in a browser when asked and possible; returns the exit code. */
export async function runAppCommand(
  target: AppCommandTarget,
  opts: { open: boolean; out: (s: string) => void; env: NodeJS.ProcessEnv },
): Promise<number> {
  if (!target.appUrl)
    throw new AivyxError('Config', 'the running aivyx up serves no app', {
      hint: 'restart aivyx up (the app starts with it; AIVYX_APP_PORT)',
    });
  const res = await fetch(`${target.appUrl}/signin/links`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.restToken}` },
  }).catch((err: unknown) => {
    throw new AivyxError('Channel', `the app at ${target.appUrl} does not answer: ${(err as Error).message}`, {
      hint: 'is aivyx up still running?',
    });
  });
  if (!res.ok)
    throw new AivyxError('CapabilityDenied', `the app refused a sign-in link (HTTP ${res.status})`, {
      hint: 'the REST token changed: restart aivyx up',
    });
  const { url } = (await res.json()) as { url: string };
  opts.out(`Sign in to your assistant (the link works once, within 10 minutes):\n  ${url}\n`);
  if (opts.open && (opts.env.DISPLAY || opts.env.WAYLAND_DISPLAY || process.platform === 'darwin')) openInBrowser(url);
  return 0;
}

/** Best effort: the desktop's opener, detached; a missing one only means the printed link is used. */
function openInBrowser(url: string): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // the link is printed above
  }
}
