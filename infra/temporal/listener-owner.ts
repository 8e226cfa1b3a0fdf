/**
 * Whether a process is the one listening on a TCP port, read from /proc (Linux). A health check only
 * says that *a* Temporal answers at an address: when our dev server could not bind its port because
 * another install's server holds it, that other server answers. This tells them apart.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const LISTEN = '0A';

/** Inodes of the sockets listening on `port` (IPv4 and IPv6), or undefined where /proc/net is not readable. */
function listeningInodes(port: number): Set<string> | undefined {
  const suffix = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  let read = false;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
      read = true;
    } catch {
      continue;
    }
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(suffix) && f[3] === LISTEN && f[9]) inodes.add(f[9]);
    }
  }
  return read ? inodes : undefined;
}

/** True when `pid` holds a socket listening on `port`, false when it does not, undefined where /proc cannot tell. */
export function listensOn(pid: number, port: number): boolean | undefined {
  const inodes = listeningInodes(port);
  if (!inodes) return undefined;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return undefined;
  }
  return fds.some((fd) => {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      return inode !== undefined && inodes.has(inode);
    } catch {
      return false; // closed meanwhile
    }
  });
}
