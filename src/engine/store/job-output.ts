import { openRegularFileWithStats } from '../../base/safe-read';
import type { TaskPaths } from '../../protocol';

/** The end of a Slurm job's output (supervisor.log: what a supervisor that could not start wrote), for a lost task's reason. */
export async function jobOutputTail(paths: TaskPaths, bytes = 2000): Promise<string> {
  try {
    // The task folder is writable by an agent: no link, FIFO or device is followed or blocked on.
    const { handle, stats } = await openRegularFileWithStats(paths.supervisorLog, { within: paths.dir });
    try {
      const length = Math.min(bytes, stats.size);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, stats.size - length);
      return buffer.toString('utf8').trim();
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}
