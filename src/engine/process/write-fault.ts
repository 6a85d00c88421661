/**
 * The first failed write of a task's own files (raw.log, events.jsonl): ENOSPC on a full disk, EFBIG past a file-size
 * limit, EIO. It is latched, not thrown: a throw from inside a stream callback would kill the supervisor silently
 * (the task then shows `lost`). The run listens to `signal` to stop the agent's group, and the conclusion reads
 * `reason` to fail the task with it.
 */
export class WriteFault {
  private readonly controller = new AbortController();
  private first: string | undefined;

  /** Aborted at the first failure. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** "raw.log could not be written: ENOSPC: no space left on device, write", or undefined while all writes succeed. */
  get reason(): string | undefined {
    return this.first;
  }

  report(file: string, error: unknown): void {
    if (this.first !== undefined) return;
    this.first = `${file} could not be written: ${error instanceof Error ? error.message : String(error)}`;
    this.controller.abort();
  }
}
