import { writeSealedJson } from '../store/record-seal';
import { ACTIVE_STATUSES, TaskStateSchema, type TaskState } from '../../protocol';

/**
 * state.json's single writer (sealed: record-seal.ts): patches merge into the in-memory state and are written atomically, one at a time in
 * call order (an update never overtakes an earlier one). A key patched to `undefined` is removed. Once it has written
 * a final status, later patches are ignored: a step that outlived the task's conclusion (a hung git the after-run
 * watchdog gave up on) can never reopen or rewrite a finished task.
 *
 * Every write carries the next `seq` and how many events the log holds (`events_written`), sealed with it: an earlier
 * state.json put back, or the log cut short, is told by the readers (record-order.ts).
 */
export class StateWriter {
  private chain: Promise<unknown> = Promise.resolve();
  private concluded = false;
  constructor(
    private readonly file: string,
    private current: TaskState,
    /** How many events the task's log holds now (its writer's count); without it the last recorded count is kept. */
    private readonly eventsWritten?: () => number,
  ) {}

  /** The `seq` the next write gets (result.json names the final state's: finalize.ts). Read once settled(). */
  get nextSeq(): number {
    return (this.current.seq ?? 0) + 1;
  }

  update(patch: Partial<TaskState>): Promise<TaskState> {
    const next = this.chain.then(async () => {
      if (this.concluded) return this.current;
      const merged: Record<string, unknown> = { ...this.current, ...patch, seq: this.nextSeq };
      for (const [key, value] of Object.entries(merged)) if (value === undefined) delete merged[key];
      const final = !ACTIVE_STATUSES.includes(merged.status as TaskState['status']);
      // A final state is followed by exactly one `finished` event (finalize.ts): the log it vouches for holds that too.
      if (this.eventsWritten) merged.events_written = this.eventsWritten() + (final ? 1 : 0);
      this.current = TaskStateSchema.parse(merged);
      await writeSealedJson(this.file, 'state', this.current);
      this.concluded = final;
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
