import { writeJsonAtomic } from '../base/atomic';
import { TaskStateSchema, type TaskState } from '../protocol';

/**
 * state.json's single writer: patches merge into the in-memory state and are written atomically, one at a time in
 * call order (an update never overtakes an earlier one). A key patched to `undefined` is removed.
 */
export class StateWriter {
  private chain: Promise<unknown> = Promise.resolve();
  constructor(
    private readonly file: string,
    private current: TaskState,
  ) {}

  update(patch: Partial<TaskState>): Promise<TaskState> {
    const next = this.chain.then(async () => {
      const merged: Record<string, unknown> = { ...this.current, ...patch };
      for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
      this.current = TaskStateSchema.parse(merged);
      await writeJsonAtomic(this.file, this.current);
      return this.current;
    });
    this.chain = next.catch(() => undefined);
    return next;
  }
}
