import { promises as fs } from 'node:fs';

/*
 * After the agent has ended, the supervisor still has work to do (drain the outbox, expire questions, diff, read the
 * report, write the conclusion). Each step reads untrusted files through bounded, non-blocking readers, but git can
 * still hang (a stuck lock on a network file system, a huge repository on a dying disk). A task must always reach a
 * final state: the whole after-run stretch gets one budget, and when it is spent the task concludes `failed`, naming
 * the step that hung, and the supervisor's own child processes (that git) are ended.
 */

export const DEFAULT_CONCLUDE_BUDGET_MS = 10 * 60_000;

/** The after-run budget: $CAESAR_CONCLUDE_BUDGET_MS when it is a positive number, else ten minutes. */
export function concludeBudgetMs(env: NodeJS.ProcessEnv = process.env): number {
  const configured = Number(env.CAESAR_CONCLUDE_BUDGET_MS);
  return Number.isFinite(configured) && configured > 0 ? configured : DEFAULT_CONCLUDE_BUDGET_MS;
}

export class PhaseTimeout extends Error {
  constructor(
    readonly phase: string,
    readonly budgetMs: number,
  ) {
    super(`did not finish within ${Math.round(budgetMs / 1000)} s (hung while ${phase})`);
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
