/**
 * Whether a process with this pid exists on this host. `kill(pid, 0)` sends nothing; EPERM means it exists but belongs
 * to another user. Pids recorded on another host mean nothing here: callers check the host first.
 */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
