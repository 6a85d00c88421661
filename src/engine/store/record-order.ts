import { ACTIVE_STATUSES, type ProtocolEvent, type ResultDoc, type TaskState } from '../../protocol';

/*
 * A seal says who wrote a record, not when: a task's own earlier state.json, put back, verifies like the last one.
 * The records therefore commit to their order, sealed with them: every state.json carries its `seq` and how many
 * events the log held when it was written (`events_written`); result.json names the `seq` of the final state written
 * right after it; every event line has its `seq` from 0. A reader holding records Caesar wrote later than the state
 * it reads (a result.json naming a later state, the log's `finished`, written after the final state) knows that
 * state is an older one; a log that holds fewer events than the state vouches for was cut short.
 *
 * Records from before these fields existed carry none of them and are judged as before. This is what the task folder
 * itself can tell: someone who puts back every record of a task to one earlier moment (state, log and no result) is
 * not told apart from a task whose supervisor died then.
 */

/** What was written after a state, as far as the reader has it (each one already verified: record-seal.ts). */
export interface LaterRecords {
  result?: Pick<ResultDoc, 'state_seq'>;
  /** The last event of the log Caesar wrote. */
  lastEvent?: ProtocolEvent;
  /** The task's supervisor is gone (its pid dead on this host, or never started in time). */
  supervisorGone: boolean;
}

/** Why a verified state.json is an earlier record than others Caesar wrote of the task; undefined when none says so. */
export function olderStateReason(state: TaskState, later: LaterRecords): string | undefined {
  const seq = state.seq ?? 0;
  const older = (why: string) =>
    `state.json of task ${state.id} is an older record (seq ${seq}, status ${state.status}) than ${why}: an earlier state put back is refused`;
  const finalSeq = later.result?.state_seq;
  if (finalSeq !== undefined && seq < finalSeq) {
    // The one state before the final one is what a reader sees between result.json and the final state: only while
    // the supervisor is still there to write it.
    if (seq < finalSeq - 1 || later.supervisorGone) return older(`result.json, which was written before state seq ${finalSeq}`);
  }
  if (ACTIVE_STATUSES.includes(state.status) && later.lastEvent?.type === 'finished') {
    return older(`the log's closing event (seq ${later.lastEvent.seq}), which is written after the final state`);
  }
  return undefined;
}

/** Why the log is shorter than the state vouches for ("truncated after seq N"); undefined when it holds them all. */
export function truncatedLogReason(state: TaskState, lastSeq: number | undefined): string | undefined {
  const committed = state.events_written;
  const held = (lastSeq ?? -1) + 1;
  if (committed === undefined || held >= committed) return undefined;
  const where = lastSeq === undefined ? 'before its first event' : `after seq ${lastSeq}`;
  return `events.jsonl of task ${state.id} was truncated ${where}: state.json (seq ${state.seq ?? 0}) vouches for ${committed} events`;
}

/**
 * The first break in a log's numbering (events are numbered 0, 1, 2, … by their one writer): a line taken out of the
 * middle, or lines put back in another order. Undefined when the numbers run on.
 */
export class SeqGaps {
  private expected = 0;
  first?: string;

  see(seq: number): void {
    if (seq !== this.expected) this.first ??= seq > this.expected ? `events.jsonl misses seq ${this.expected}${seq - 1 > this.expected ? `–${seq - 1}` : ''} (cut out)` : `events.jsonl repeats or reorders seq ${seq} (after seq ${this.expected - 1})`;
    this.expected = Math.max(this.expected, seq + 1);
  }

  /** The last seq seen, or undefined when none was. */
  get last(): number | undefined {
    return this.expected > 0 ? this.expected - 1 : undefined;
  }
}
