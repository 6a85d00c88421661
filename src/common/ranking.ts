import type { CheckResult, ObservedStatus, TaskState, Usage } from '../protocol';
import { formatDuration } from './format';

/*
 * Best of N on evidence (issue 25): the one ranking of candidate tasks (typically one objective run on several
 * agents) that the editor's Compare Tasks and `caesar compare` both show. Every figure is what Caesar observed — its
 * own checks' exit codes, git's diff, the recorded times and usage — never the agent's word. Pure and browser-safe.
 *
 * Order: the agent's run succeeded (a failed, cancelled or lost run is no candidate), then fewer failed checks, then
 * more checks passed, then a task that changed something before one that changed nothing, then the smaller diff
 * (lines added + deleted), then the shorter run, then the lower cost. An unknown figure sorts after a known one.
 * Times and costs are told apart only where a person would notice (NOTICEABLE): two runs of 2.01 s and 2.03 s are a
 * tie, never "a shorter run (2s vs 2s)". Tasks that made the very same change (the same `change` digest) are said to.
 */

/** The smallest difference that decides: below both the absolute and the relative step, two figures are a tie. */
export const NOTICEABLE = {
  duration: { absoluteMs: 2_000, relative: 0.1 },
  cost: { absoluteUsd: 0.01, relative: 0.1 },
} as const;

/** What the ranking reads of a task: TaskSummary (src/engine/store) has this shape. */
export interface RankCandidate {
  id: string;
  observed: ObservedStatus;
  state: Pick<TaskState, 'agent' | 'model' | 'started_at' | 'ended_at' | 'usage' | 'checks'>;
  /** The change's identity (a digest of its patch), where known: equal ones made the very same change. */
  change?: string;
  result?: {
    checks?: readonly Pick<CheckResult, 'exit_code'>[];
    diff?: { files: readonly { additions?: number; deletions?: number }[] };
    usage?: Usage;
  };
}

export interface RankedCandidate {
  /** 1 for the best; tasks equal on every criterion share a place. */
  place: number;
  id: string;
  agent: string;
  status: ObservedStatus;
  checks: { passed: number; failed: number; total: number };
  files: number;
  /** Lines added plus deleted, from git's diff. */
  changed_lines: number;
  duration_ms?: number;
  cost_usd?: number;
  /** The id of the first task ranked above this one that made the very same change, when one did. */
  same_change_as?: string;
  /** One line: the task's figures, and what put it where it is. */
  why: string;
}

interface Figures {
  candidate: RankCandidate;
  succeeded: boolean;
  checks: RankedCandidate['checks'];
  files: number;
  changedLines: number;
  durationMs?: number;
  costUsd?: number;
}

function figuresOf(candidate: RankCandidate): Figures {
  const recorded = candidate.result?.checks;
  const total = recorded?.length ?? candidate.state.checks?.total ?? 0;
  const failed = recorded ? recorded.filter((c) => c.exit_code !== 0).length : (candidate.state.checks?.failed ?? 0);
  const files = candidate.result?.diff?.files ?? [];
  const usage = candidate.result?.usage ?? candidate.state.usage;
  const durationMs = usage?.duration_ms ?? elapsed(candidate.state);
  return {
    candidate,
    succeeded: candidate.observed === 'succeeded',
    checks: { passed: total - failed, failed, total },
    files: files.length,
    changedLines: files.reduce((n, f) => n + (f.additions ?? 0) + (f.deletions ?? 0), 0),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(usage?.cost_usd !== undefined ? { costUsd: usage.cost_usd } : {}),
  };
}

function elapsed(state: RankCandidate['state']): number | undefined {
  if (!state.started_at || !state.ended_at) return undefined;
  const ms = Date.parse(state.ended_at) - Date.parse(state.started_at);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/** One criterion: negative when `a` is better; `says` words a's advantage over b. */
interface Criterion {
  compare(a: Figures, b: Figures): number;
  says(a: Figures, b: Figures): string;
}

/** Known before unknown, then smaller first; a difference below both steps is none. */
function smaller(a: number | undefined, b: number | undefined, step: { absolute: number; relative: number }): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  const noticed = Math.max(step.absolute, step.relative * Math.max(Math.abs(a), Math.abs(b)));
  return Math.abs(a - b) < noticed ? 0 : a - b;
}

const DURATION_STEP = { absolute: NOTICEABLE.duration.absoluteMs, relative: NOTICEABLE.duration.relative };
const COST_STEP = { absolute: NOTICEABLE.cost.absoluteUsd, relative: NOTICEABLE.cost.relative };

const usd = (n: number | undefined) => (n === undefined ? 'unknown' : `$${n.toFixed(2)}`);
const time = (n: number | undefined) => (n === undefined ? 'unknown' : formatDuration(n));

const CRITERIA: readonly Criterion[] = [
  { compare: (a, b) => Number(b.succeeded) - Number(a.succeeded), says: (_a, b) => `a run that succeeded (vs ${b.candidate.observed})` },
  { compare: (a, b) => a.checks.failed - b.checks.failed, says: (a, b) => `fewer failed checks (${a.checks.failed} vs ${b.checks.failed})` },
  { compare: (a, b) => b.checks.passed - a.checks.passed, says: (a, b) => `more passed checks (${a.checks.passed} vs ${b.checks.passed})` },
  { compare: (a, b) => Number(a.files === 0) - Number(b.files === 0), says: () => 'a change (vs no file changed)' },
  { compare: (a, b) => a.changedLines - b.changedLines, says: (a, b) => `a smaller diff (${a.changedLines} vs ${b.changedLines} lines)` },
  { compare: (a, b) => smaller(a.durationMs, b.durationMs, DURATION_STEP), says: (a, b) => `a shorter run (${time(a.durationMs)} vs ${time(b.durationMs)})` },
  { compare: (a, b) => smaller(a.costUsd, b.costUsd, COST_STEP), says: (a, b) => `a lower cost (${usd(a.costUsd)} vs ${usd(b.costUsd)})` },
];

/** The first criterion that tells a and b apart, or undefined when they are equal on all. */
function deciding(a: Figures, b: Figures): Criterion | undefined {
  return CRITERIA.find((c) => c.compare(a, b) !== 0);
}

function compareFigures(a: Figures, b: Figures): number {
  const criterion = deciding(a, b);
  return criterion ? criterion.compare(a, b) : a.candidate.id.localeCompare(b.candidate.id);
}

/** The candidates best first, each with its place and one line saying why it stands there. */
export function rankCandidates(candidates: readonly RankCandidate[]): RankedCandidate[] {
  const sorted = candidates.map(figuresOf).sort(compareFigures);
  const places: number[] = [];
  sorted.forEach((f, i) => {
    const previous = sorted[i - 1];
    places.push(previous && !deciding(previous, f) ? (places[i - 1] as number) : i + 1);
  });
  return sorted.map((f, i) => {
    const twin = sameChangeAbove(sorted, i);
    return {
      place: places[i] as number,
      id: f.candidate.id,
      agent: f.candidate.state.model ? `${f.candidate.state.agent} (${f.candidate.state.model})` : f.candidate.state.agent,
      status: f.candidate.observed,
      checks: f.checks,
      files: f.files,
      changed_lines: f.changedLines,
      ...(f.durationMs !== undefined ? { duration_ms: f.durationMs } : {}),
      ...(f.costUsd !== undefined ? { cost_usd: f.costUsd } : {}),
      ...(twin ? { same_change_as: twin.candidate.id } : {}),
      why: whyLine(sorted, i),
    };
  });
}

/** The first task ranked above `i` that made the very same (non-empty) change. */
function sameChangeAbove(sorted: readonly Figures[], i: number): Figures | undefined {
  const change = sorted[i]?.candidate.change;
  if (!change || sorted[i]?.files === 0) return undefined;
  return sorted.slice(0, i).find((f) => f.candidate.change === change);
}

/** The figures, then: ahead of the next one because…, or behind the previous one because…, or tied. */
function whyLine(sorted: readonly Figures[], i: number): string {
  const f = sorted[i] as Figures;
  const checks = f.checks.total === 0 ? 'no checks' : `checks ${f.checks.passed}/${f.checks.total} passed`;
  let figures = `${f.candidate.observed}, ${checks}, ${f.changedLines} lines in ${f.files} file${f.files === 1 ? '' : 's'}, ${time(f.durationMs)}, ${usd(f.costUsd)}`;
  const previous = sorted[i - 1];
  const next = sorted[i + 1];
  const twin = sameChangeAbove(sorted, i);
  if (twin) figures += `; the same change as #${sorted.indexOf(twin) + 1} (${twin.candidate.state.agent})`;
  if (previous) {
    const criterion = deciding(previous, f);
    const named = `#${i} (${previous.candidate.state.agent})`;
    return `${figures}; ${criterion ? `after ${named}, which has ${criterion.says(previous, f)}` : `tied with ${named}: no figure tells them apart`}`;
  }
  if (!next) return `${figures}; the only candidate`;
  const criterion = deciding(f, next);
  return `${figures}; first: ${criterion ? `${criterion.says(f, next)} than #2 (${next.candidate.state.agent})` : `tied with #2 (${next.candidate.state.agent}): no figure tells them apart`}`;
}
