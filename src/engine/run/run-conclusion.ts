import { checkPassed, type CheckResult, type EventDraft, type Finding, type Report, type ReportTier, type TaskPaths, type Usage } from '../../protocol';
import type { SpawnPlan, TranslationSummary } from '../../agents/types';
import type { Conclusion } from './finalize';
import { checkoutWritesFinding, ignoredFilesFindings } from '../git/checkout-guard';
import { computeDiff, excludedFor, reconcileScope, type Placement } from './isolation';
import type { LaunchSpec } from '../../protocol';
import { reconcileReport, type DiffResult } from '../git/reconcile';
import { worktreeTree } from '../git/worktree-seal';
import { resolveReport, synthesize, type ProcessOutcome } from './report';
import type { RunAgentResult } from '../process/spawn';
import type { TaskStatus } from '../../protocol';
import type { StateWriter } from './state-writer';
import { PhaseTimeout, type AfterRunPhase } from '../process/phase-watchdog';
import { repositoryChangeFindings } from '../git/repository-watch';
import { uncheckedNestedRepositories } from '../git/nested-git';
import { bareLayoutFinding, bareRepositoryLayouts } from '../git/bare-layout';

export interface RunToConclude {
  id: string;
  paths: TaskPaths;
  launch: LaunchSpec;
  placement: Placement;
  run: RunAgentResult;
  translation: TranslationSummary;
  tier: ReportTier;
  plan: SpawnPlan;
  /** The last `finished` a translator produced: its status is the agent's own verdict on the run. */
  translatorFinished?: Extract<EventDraft, { type: 'finished' }>;
  state: StateWriter;
  /** What the checks Caesar ran observed (checks.ts), in order. */
  checks?: CheckResult[];
  /** Runs an after-run phase under the supervisor's watchdog (phase-watchdog.ts); without one, just runs it. */
  watch?: <T>(phase: AfterRunPhase, work: () => Promise<T>) => Promise<T>;
}

/**
 * What an agent's run amounts to: the report tier's report (or a synthesized one), reconciled with git's diff, the
 * findings of every step, the usage and the task's status. Writes nothing but the excluded paths into the state.
 */
export async function concludeRun(input: RunToConclude): Promise<Conclusion> {
  const { launch, placement, run, translation, tier, plan } = input;
  const watch = input.watch ?? (<T>(_phase: AfterRunPhase, work: () => Promise<T>) => work());
  const held = input.translatorFinished;
  const nativeFailure = translation.nativeFailure ?? (held?.status === 'failed' ? held.summary || 'the agent reported a failure' : undefined);
  const outcome: ProcessOutcome = {
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    cancelled: run.cancelled,
    ...(run.spawnError ? { spawnError: run.spawnError } : {}),
    ...(nativeFailure ? { nativeFailure } : {}),
  };
  let diff: DiffResult | undefined;
  const diffFindings: Finding[] = [];
  const excluded = excludedFor(placement, plan);
  if (excluded.length) {
    // apply and gc recompute the diff long after this process is gone: they must exclude exactly what we excluded.
    await input.state.update({ excluded_paths: excluded });
  }
  // result.json and the report need the files and their counts only; review and apply make the patch on demand.
  const diffing = computeDiff(placement, excluded, { patch: false });
  // The worktree as the task leaves it, sealed into result.json: apply applies this, not what the worktree holds
  // later (another task without the sandbox may write into it: worktree-seal.ts).
  const sealing = placement.worktree ? worktreeTree(placement.worktree.path, excluded, placement.worktree.repo) : undefined;
  sealing?.catch(() => undefined);
  // The user's checkout is compared beside the task's own diff (different repositories' files: no contention on a
  // lock), started second because the diff is the longer of the two, so the guard adds no time to a task's end.
  const checkoutCheck = placement.checkout ? checkoutWritesFinding(placement.checkout) : Promise.resolve(undefined);
  // Ignored files of the checkout (node_modules, .env), which no diff shows: a worktree task's, or an in-place one's.
  const ignoredCheck = ignoredFilesFindings(placement.checkout ?? placement.snapshot, placement.checkout ? 'worktree' : 'inplace');
  // The shared git dir against its record at the start: beside the diff too (a few small files and one ref listing).
  const repositoryCheck = placement.repository && placement.gitRoot
    ? repositoryChangeFindings(placement.gitRoot, input.id, placement.repository)
    : Promise.resolve(undefined);
  repositoryCheck.catch(() => undefined); // awaited below; its failure is a finding there
  try {
    diff = await watch('diff', () => diffing);
  } catch (err) {
    if (err instanceof PhaseTimeout) throw err; // a hung git fails the task (the supervisor's watchdog), not the diff
    const message = err instanceof Error ? err.message : String(err);
    diffFindings.push({ severity: 'high', title: 'Diff could not be computed', detail: `${message}. The agent's declared changes could not be verified.` });
  }
  // A HEAD git would take for a repository's (bare-layout.ts): in place, it is in the checkout already.
  const diffRoot = placement.worktree?.path ?? placement.gitRoot;
  if (diff && diffRoot) diffFindings.push(...bareLayoutFinding(await bareRepositoryLayouts(diffRoot, diff.files).catch(() => [])));
  let worktreeTreeId: string | undefined;
  if (sealing) {
    try {
      worktreeTreeId = await watch('diff', () => sealing);
    } catch (err) {
      if (err instanceof PhaseTimeout) throw err;
      diffFindings.push({ severity: 'medium', title: 'Worktree not sealed', detail: `The worktree's state at the task's end could not be recorded (${err instanceof Error ? err.message : String(err)}): apply will apply the worktree as it is then.` });
    }
  }
  const checkoutWrites = await watch('diff', () => checkoutCheck);
  if (checkoutWrites) diffFindings.push(checkoutWrites);
  diffFindings.push(...(await watch('diff', () => ignoredCheck)));
  let repositoryChanges: string[] | undefined;
  try {
    const watched = await watch('diff', () => repositoryCheck);
    if (watched) {
      repositoryChanges = watched.changes;
      diffFindings.push(...watched.findings);
    }
  } catch (err) {
    if (err instanceof PhaseTimeout) throw err;
    const message = err instanceof Error ? err.message : String(err);
    repositoryChanges = [`the repository could not be compared with its record (${message})`];
    diffFindings.push({ severity: 'critical', title: 'Repository could not be checked', detail: `The shared git dir could not be compared with its record at the task's start: ${message}. Apply refuses until you accept that.` });
  }
  const resolved = await watch('report', () => resolveReport({
    taskId: input.id,
    tier,
    channel: tier === 'channel',
    paths: input.paths,
    translation: held?.summary && !translation.finalText ? { ...translation, finalText: held.summary } : translation,
    outcome,
    ...(diff ? { diffFiles: diff.files } : {}),
  }));
  const reconciled = reconcileReport(
    resolved.report,
    diff,
    launch.mode,
    reconcileScope({ worktreePath: placement.worktree?.path, gitRoot: placement.gitRoot, prefix: placement.prefix }),
  );
  const report: Report = {
    ...reconciled.report,
    findings: [...reconciled.report.findings, ...resolved.findings, ...diffFindings, ...checkFindings(input.checks ?? []), ...placement.findings, ...launch.findings],
  };
  // A worktree too large to search for planted repositories refuses the result as a changed repository does.
  const unchecked = uncheckedNestedRepositories(placement.findings);
  if (unchecked.length) repositoryChanges = [...(repositoryChanges ?? []), ...unchecked];
  const usage = mergeUsage(report.usage, translation.usage, run.durationMs);
  if (run.writeError) {
    report.findings.push({ severity: 'high', title: 'Task files could not be written', detail: `${run.writeError}. The agent was stopped: its work could no longer be recorded.` });
  }
  const status: TaskStatus = run.writeError
    ? 'failed'
    : run.cancelled
    ? 'cancelled'
    : run.timedOut
      ? 'timed_out'
      : run.exitCode === 0 && !run.spawnError && !nativeFailure
        ? 'succeeded'
        : 'failed';
  return {
    status,
    report,
    source: resolved.source,
    verifiedBy: reconciled.changes_verified_by,
    agentReportValid: resolved.agent_report_valid,
    ...(resolved.agent_report_error ? { agentReportError: resolved.agent_report_error } : {}),
    usage,
    ...(diff ? { diff } : {}),
    ...(worktreeTreeId ? { worktreeTree: worktreeTreeId } : {}),
    ...(repositoryChanges ? { repositoryChanges } : {}),
    exitCode: run.exitCode,
    signal: run.signal,
    ...(run.spawnError || run.writeError ? { error: run.spawnError ?? run.writeError } : {}),
    ...(input.checks?.length ? { checks: input.checks } : {}),
  };
}

/** A high finding per failed check: what Caesar observed, beside whatever the agent said it ran. */
function checkFindings(checks: CheckResult[]): Finding[] {
  return checks.filter((check) => !checkPassed(check)).map((check) => {
    const how = check.error ?? `exit code ${check.exit_code}`;
    const tail = check.output_tail.trim().slice(-600);
    return { severity: 'high', title: `Check "${check.name}" failed`, detail: `\`${check.command}\`: ${how}.${tail ? ` Its output ended with:\n${tail}` : ''}` };
  });
}

function mergeUsage(fromReport: Usage | undefined, fromStream: Usage | undefined, durationMs: number): Usage {
  return { ...fromReport, ...fromStream, duration_ms: durationMs };
}

/** A conclusion without the agent's word or git's (it never ran, or its conclusion hung): synthesized, findings kept. */
export function synthesizedConclusion(
  taskId: string,
  status: 'failed' | 'cancelled',
  message: string,
  findings: Finding[],
  how: { exitCode: number | null; signal: string | null; spawnError?: string; nativeFailure?: string },
): Conclusion {
  const { exitCode, signal, ...why } = how;
  const outcome: ProcessOutcome = { exitCode, timedOut: false, cancelled: status === 'cancelled', ...why };
  const report = synthesize({ taskId, translation: {}, outcome }, []);
  return {
    status,
    report: { ...report, summary: status === 'cancelled' || how.nativeFailure ? message : report.summary, findings },
    source: 'synthesized',
    verifiedBy: 'declaration',
    agentReportValid: false,
    exitCode,
    signal,
    ...(status === 'failed' ? { error: message } : {}),
  };
}
