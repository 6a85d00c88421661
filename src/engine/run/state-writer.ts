import { writeSealedJson } from '../store/record-seal';
import { ACTIVE_STATUSES, TaskStateSchema, type TaskState } from '../../protocol';

/**
 * state.json's single writer (sealed: record-seal.ts): patches merge into the in-memory state and are written atomically, one at a time in
 * call order (an update never overtakes an earlier one). A key patched to `undefined` is removed. Once it has written
 * a final status, later patches are ignored: a step that outlived the task's conclusion (a hung git the after-run
 * watchdog gave up on) can never reopen or rewrite a finished task.
 */
export class StateWriter {
  private chain: Promise<unknown> = Promise.resolve();
  private concluded = false;
  constructor(
    private readonly file: string,
    private current: TaskState,
  ) {}

  update(patch: Partial<TaskState>): Promise<TaskState> {
    const next = this.chain.then(async () => {
      if (this.concluded) return this.current;
      const merged: Record<string, unknown> = { ...this.current, ...patch };
      for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
      this.current = TaskStateSchema.parse(merged);
      await writeSealedJson(this.file, 'state', this.current);
      this.concluded = !ACTIVE_STATUSES.includes(this.current.status);
      return this.current;
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Resolves once every update asked for so far is on disk (or failed): fire-and-forget phase labels included. */
  async settled(): Promise<void> {
    await this.chain;
  }
}
