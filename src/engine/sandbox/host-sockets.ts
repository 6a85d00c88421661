import { lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import * as path from 'node:path';

/*
 * The host's UNIX sockets, out of every task's reach (issue 34). A read-only mount does not stop a connect(), and the
 * agent runs as the user's own uid outside (root's, when Caesar runs as root: a user namespace made by a process maps
 * to that process's uid, and bubblewrap offers no other mapping), so any socket whose mode lets the user in answers
 * the agent as the user: a root-owned 0600 one answered an agent as root. Cutting the network does not help either:
 * a socket with a path is reached through the file system, not the network.
 *
 * So the system's service folders (/run, and /var/run where it is not a link to it) get a tmpfs, with only what the
 * agent needs shown again (name resolution: /etc files that link into /run); and every other socket with a path that
 * the kernel lists as bound (/proc/net/unix: every socket of this network namespace) is covered with an empty file
 * where it lies, the user's home included. Sockets under /tmp and /dev are private already (a tmpfs, a fresh /dev),
 * but for the folders there shown again to the agent (a home, a repository, a tool under /tmp): covered too.
 * Caesar's own sockets for the task (the network bridge, the delegation socket) are mounted after these and win.
 */

/** Folders of the system's services, hidden whole. */
const SERVICE_FOLDERS = ['/run', '/var/run'];
/** Areas the sandbox already replaces: a socket there is no host socket inside. */
const PRIVATE_AREAS = ['/tmp', '/dev', '/proc'];

/** The service folders that are real folders here (/var/run is usually a link to /run: hidden with it). */
export function serviceFolders(): string[] {
  const folders = new Set<string>();
  for (const folder of SERVICE_FOLDERS) {
    try {
      if (lstatSync(folder).isDirectory()) folders.add(folder);
    } catch {
      /* absent (not Linux, a minimal container) */
    }
  }
  return [...folders];
}

/**
 * What under the service folders the agent still needs, read-only: the targets of /etc's links into them (resolv.conf
 * → /run/systemd/resolve/stub-resolv.conf, for names; any other configuration kept there the same way).
 */
export function neededUnderServiceFolders(): string[] {
  const folders = serviceFolders();
  if (!folders.length) return [];
  const needed = new Set<string>();
  let links: string[] = [];
  try {
    // The entries' types from the folder listing itself: one realpath per link, no lstat per file.
    links = readdirSync('/etc', { withFileTypes: true }).filter((entry) => entry.isSymbolicLink()).map((entry) => path.join('/etc', entry.name));
  } catch {
    return [];
  }
  for (const link of links) {
    try {
      const real = realpathSync(link);
      if (folders.some((folder) => isUnder(real, folder))) needed.add(real);
    } catch {
      /* a dangling link: nothing to show */
    }
  }
  return [...needed];
}

/**
 * Every socket with a path bound in this network namespace, per the kernel (/proc/net/unix), that is a socket on disk
 * now and lies outside the service folders, and outside the private areas but for the paths of them shown again
 * (`shown`: a home or an install under /tmp, neededUnderTmp in policy.ts).
 * A socket bound by a process of another network namespace (a container's) is not listed: see docs/sandbox.md.
 */
export function hostSockets(shown: string[] = []): string[] {
  let table: string;
  try {
    table = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return [];
  }
  const skipped = [...serviceFolders(), ...PRIVATE_AREAS];
  const showing = shown.map((p) => path.resolve(p));
  const sockets = new Set<string>();
  for (const line of table.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path; an abstract socket's path starts with '@', an unbound one has none.
    const fields = line.trim().split(/\s+/);
    const socket = fields.slice(7).join(' ');
    if (!socket.startsWith('/') || (skipped.some((area) => isUnder(socket, area)) && !showing.some((p) => isUnder(socket, p)))) continue;
    try {
      if (lstatSync(socket).isSocket()) sockets.add(socket);
    } catch {
      /* removed since it was bound */
    }
  }
  return [...sockets].sort();
}

/**
 * The host sockets to cover, but those named exactly in `named` (the user's [sandbox] read_write: a socket the agent
 * needs). Covered after what would show them again (the workspace, read_write folders): policy.ts.
 */
export function socketsToCover(named: string[], shown: string[]): string[] {
  const kept = new Set(named.map((p) => path.resolve(p)));
  return hostSockets(shown).filter((socket) => !kept.has(socket));
}

function isUnder(p: string, folder: string): boolean {
  return p === folder || p.startsWith(folder.endsWith('/') ? folder : `${folder}/`);
}
