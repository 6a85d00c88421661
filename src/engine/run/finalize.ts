import { parseReport, type Report, type Usage } from '../../protocol';
import { writeSealedJson } from '../store/record-seal';
import type { DiffResult } from '../git/reconcile';
import { checkPassed, type CheckResult, type ResultDoc } from '../../protocol';
import type { ReportSource, TaskState, TaskStatus } from '../../protocol';
import type { StateWriter } from './state-writer';
import { capResultLists } from '../store/result-caps';

/** How a task ended, as its writer concluded it: what result.json and the final state are made of. */
export interface Conclusion {
  status: TaskStatus;
  report: Report;
  source: ReportSource;
  verifiedBy: 'git' | 'declaration';
  agentReportValid: boolean;
  agentReportError?: string;
  usage?: Usage;
  diff?: DiffResult;
  /** The worktree's tree as the task left it (reconcile.ts worktreeTree): what apply applies. */
  worktreeTree?: string;
  /** What changed in the shared git dir during the task (repository-watch.ts); absent when it was not watched. */
  repositoryChanges?: string[];
  /** The agent's exit; left out of the state when nobody saw the agent end (a task concluded by gc). */
  exitCode?: number | null;
  signal?: string | null;
  error?: string;
  /** The checks Caesar ran after the agent ended (checks.ts); absent when the task had none. */
  checks?: CheckResult[];
}

export interface ConclusionWriters {
  resultFile: string;
  state: StateWriter;
  /** Gives back what the task held (in-place writer lease, slot); called between result.json and the final state. */
  release(): Promise<void>;
  /** Appends the single closing `finished` event; called last. */
  finish(report: Report): void | Promise<void>;
}

/**
 * Pending state writes settled, then result.json, then the lease and slot given back, then the final state, then the
 * single `finished` event: a follower that sees the final state or `finished` finds everything written and every
 * resource released. The supervisor and gc (concluding a task whose supervisor died) both conclude through here, so
 * the order is one.
 */
export async function writeConclusion(final: Conclusion, writers: ConclusionWriters): Promise<TaskState> {
  const report = parseReport({ ...final.report, ...(final.usage ? { usage: final.usage } : {}) });
  const result: ResultDoc = {
    report,
    report_source: final.source,
    changes_verified_by: final.verifiedBy,
    agent_report_valid: final.agentReportValid,
    ...(final.agentReportError ? { agent_report_error: final.agentReportError } : {}),
    ...(final.usage ? { usage: final.usage } : {}),
    ...(final.diff ? { diff: { files: final.diff.files, is_empty: final.diff.is_empty } } : {}),
    ...(final.worktreeTree ? { worktree_tree: final.worktreeTree } : {}),
    ...(final.checks?.length ? { checks: final.checks } : {}),
    ...(final.repositoryChanges ? { repository_changes: final.repositoryChanges } : {}),
  };
  // A phase label still being written (phase() does not wait for it) lands first: after result.json a reader sees
  // only the final state change, never a stale "computing the diff" once the conclusion is out.
  await writers.state.settled();
  // Names the final state to come: a state.json older than that, put back, is refused by its readers (record-order.ts).
  await writeSealedJson(writers.resultFile, 'result', { ...capResultLists(result), state_seq: writers.state.nextSeq });
  // Taken before the slot is given back, so a task that waited for this slot always starts after this one ended.
  const endedAt = new Date().toISOString();
  await writers.release();
  const state = await writers.state.update({
    status: final.status,
    ended_at: endedAt,
    ...(final.exitCode !== undefined ? { exit_code: final.exitCode } : {}),
    ...(final.signal !== undefined ? { signal: final.signal } : {}),
    report_status: report.status,
    report_source: final.source,
    changes_verified_by: final.verifiedBy,
    ...(final.usage ? { usage: final.usage } : {}),
    ...(final.error ? { error: final.error } : {}),
    ...(final.checks?.length ? { checks: { total: final.checks.length, failed: final.checks.filter((c) => !checkPassed(c)).length } } : {}),
    phase: undefined,
    agent_pid: undefined,
  });
  await writers.finish(report);
  return state;
}
