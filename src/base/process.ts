import { readFileSync } from 'node:fs';
/**
 * Whether a process with this pid exists on this host and has not ended. `kill(pid, 0)` sends nothing; EPERM means it
 * exists but belongs to another user. A zombie has ended (only its exit status waits to be collected, which never
 * happens where pid 1 does not reap orphans, as in many containers), so where /proc exists it counts as gone. Pids
 * recorded on another host mean nothing here: callers check the host first.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return !isZombie(pid);
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the command name, which is in parentheses and may itself contain ") ".
    const end = stat.lastIndexOf(')');
    return stat.charAt(end + 2) === 'Z';
  } catch {
    return false; // no /proc (or the process just ended): kill(0) is all we know
  }
}
