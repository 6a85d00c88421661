import { existsSync, watch, type FSWatcher } from 'node:fs';
import * as path from 'node:path';

const STOP_SIGNALS: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT'];

/** Turns `cancel.request` (written by any process) into an abort signal; fs.watch on the task folder. */
export class CancelWatch {
  private readonly controller = new AbortController();
  private watcher?: FSWatcher;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly file: string,
    private readonly log: (message: string) => void,
  ) {
    const name = path.basename(file);
    try {
      this.watcher = watch(path.dirname(file), (_event, changed) => {
        if (!changed || changed.toString() === name) this.check();
      });
      this.watcher.on('error', (err) => log(`watching for cancel requests: ${err.message}`));
    } catch (err) {
      log(`cannot watch for cancel requests: ${err instanceof Error ? err.message : String(err)}`);
    }
    // Safety net for file systems whose watchers miss events; one stat every few seconds.
    this.timer = setInterval(() => this.check(), 3000);
    this.timer.unref();
    // A supervisor asked to stop (shutdown, logout) stops its agent's group the same way and records a cancel.
    for (const signal of STOP_SIGNALS) process.once(signal, this.onStopSignal);
    this.check();
  }

  private readonly onStopSignal = (signal: NodeJS.Signals): void => {
    const job = process.env.SLURM_JOB_ID;
    this.log(`received ${signal}${job ? ` (as Slurm job ${job}: scancel, or the job's time limit)` : ''}: cancelling the task`);
    this.controller.abort();
  };

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  private check(): void {
    if (!this.controller.signal.aborted && existsSync(this.file)) this.controller.abort();
  }

  dispose(): void {
    this.watcher?.close();
    clearInterval(this.timer);
    for (const signal of STOP_SIGNALS) process.off(signal, this.onStopSignal);
  }
}
