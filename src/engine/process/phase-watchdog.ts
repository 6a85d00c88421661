import { promises as fs } from 'node:fs';

/*
 * After the agent has ended, the supervisor still has work to do (drain the outbox, expire questions, diff, read the
 * report, write the conclusion). Each step reads untrusted files through bounded, non-blocking readers, but git can
 * still hang (a stuck lock on a network file system, a huge repository on a dying disk), and an agent can leave a
 * flood in its outbox. A task must always reach a final state: each after-run phase gets its own budget, all of them
 * within one overall budget, and when a phase's budget is spent the task concludes `failed`, naming that phase, and
 * the supervisor's own child processes (that git) are ended.
 */

export const DEFAULT_CONCLUDE_BUDGET_MS = 10 * 60_000;

/** The overall after-run budget: $CAESAR_CONCLUDE_BUDGET_MS when it is a positive number, else ten minutes. */
export function concludeBudgetMs(env: NodeJS.ProcessEnv = process.env): number {
  return positive(env.CAESAR_CONCLUDE_BUDGET_MS) ?? DEFAULT_CONCLUDE_BUDGET_MS;
}

export type AfterRunPhase = 'drain' | 'questions' | 'checks' | 'diff' | 'report';

/**
 * Each phase's name (for the message), its default budget and the variable that overrides it. Relaying what is left
 * in the outbox, expiring questions and reading the report are bounded reads of a few files: short budgets. The diff
 * runs git over the whole worktree: it may take the rest of the overall budget.
 */
export const AFTER_RUN_PHASES: Record<AfterRunPhase, { label: string; defaultMs: number; env: string }> = {
  drain: { label: "relaying the agent's outbox", defaultMs: 60_000, env: 'CAESAR_CONCLUDE_DRAIN_MS' },
  questions: { label: 'expiring unanswered questions', defaultMs: 30_000, env: 'CAESAR_CONCLUDE_QUESTIONS_MS' },
  // Each check is killed at its own timeout (checks.ts); the budget, extended by their timeouts, is the backstop.
  checks: { label: 'running the checks', defaultMs: Number.POSITIVE_INFINITY, env: 'CAESAR_CONCLUDE_CHECKS_MS' },
  diff: { label: 'computing the diff', defaultMs: Number.POSITIVE_INFINITY, env: 'CAESAR_CONCLUDE_DIFF_MS' },
  report: { label: 'reading the report', defaultMs: 60_000, env: 'CAESAR_CONCLUDE_REPORT_MS' },
};

/** A phase's own budget: its variable when it is a positive number, else its default (before the overall cap). */
export function phaseBudgetMs(phase: AfterRunPhase, env: NodeJS.ProcessEnv = process.env): number {
  return positive(env[AFTER_RUN_PHASES[phase].env]) ?? AFTER_RUN_PHASES[phase].defaultMs;
}

function positive(value: string | undefined): number | undefined {
  const parsed = Number(value);
  return value !== undefined && value !== '' && Number.isFinite(parsed) && parsed > 0 ? parsed : undefined;
}

/**
 * The after-run watchdog of one task: created when the agent ends, it runs each phase within the smaller of the
 * phase's own budget and what is left of the overall one, and remembers the phase under way (for the outer guard).
 */
export class AfterRunWatchdog {
  private readonly deadline: number;
  private currentLabel = 'starting to conclude';

  /** `extraMs`: time granted on top of the overall budget (the checks' own timeouts, which the user configured). */
  constructor(private readonly env: NodeJS.ProcessEnv = process.env, extraMs = 0) {
    this.deadline = Date.now() + concludeBudgetMs(env) + extraMs;
  }

  /** The phase under way, as a message names it. */
  get current(): string {
    return this.currentLabel;
  }

  /** What is left of the overall budget, in ms (0 once spent). */
  get remainingMs(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  /** Runs `work` as `phase`: its result, or a PhaseTimeout naming the phase once its budget is spent. */
  phase<T>(phase: AfterRunPhase, work: () => Promise<T>): Promise<T> {
    this.currentLabel = AFTER_RUN_PHASES[phase].label;
    const budget = Math.min(phaseBudgetMs(phase, this.env), this.remainingMs);
    return withinBudget(work(), budget, () => AFTER_RUN_PHASES[phase].label);
  }
}

export class PhaseTimeout extends Error {
  constructor(
    readonly phase: string,
    readonly budgetMs: number,
  ) {
    super(`did not finish within ${budgetMs < 1000 ? `${Math.round(budgetMs)} ms` : `${Math.round(budgetMs / 1000)} s`} (hung while ${phase})`);
  }
}

/** `work`, or a PhaseTimeout naming `phase()` once `budgetMs` has passed. The late outcome of `work` is ignored. */
export async function withinBudget<T>(work: Promise<T>, budgetMs: number, phase: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  work.catch(() => undefined); // a rejection after the budget was spent must not become an unhandled one
  const spent = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new PhaseTimeout(phase(), budgetMs)), budgetMs);
  });
  try {
    return await Promise.race([work, spent]);
  } finally {
    clearTimeout(timer);
  }
}

/** SIGKILLs this process's direct children (Linux: /proc/<pid>/stat's ppid); the pids it signalled. */
export async function killOwnChildren(): Promise<number[]> {
  const names = await fs.readdir('/proc').catch(() => [] as string[]);
  const killed: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid …: the command name may itself contain ") ", so read after the last one.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid !== process.pid) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      /* already gone */
    }
  }
  return killed;
}
