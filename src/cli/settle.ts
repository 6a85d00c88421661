import { isActive, observedStatus, type TaskStore, type TaskSummary } from '../engine/tasks';

/**
 * A supervisor that dies leaves no trace in the file system (its pid just disappears), so, besides the file watcher,
 * the recorded supervisor pid is probed at this pace (kill 0: no file is read); files are re-read only when it died.
 */
const LIVENESS_CHECK_MS = 1000;

/**
 * Resolves with the task's summary once it is no longer active (finished, or lost with its supervisor), or with
 * undefined when `signal` aborts first. Driven by store.watch; calls onUpdate with each summary seen on the way.
 */
export function waitUntilSettled(
  store: TaskStore,
  id: string,
  signal: AbortSignal,
  onUpdate?: (summary: TaskSummary) => void,
): Promise<TaskSummary | undefined> {
  return new Promise((resolve, reject) => {
    let done = false;
    let checking = false;
    let again = false;
    let last: TaskSummary | undefined;
    const finish = (value: TaskSummary | undefined, error?: unknown) => {
      if (done) return;
      done = true;
      watcher.dispose();
      clearInterval(timer);
      signal.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve(value);
    };
    const check = async () => {
      if (checking) {
        again = true;
        return;
      }
      checking = true;
      try {
        do {
          again = false;
          const summary = await store.summary(id);
          if (done) return;
          if (!summary) return finish(undefined, new Error(`Task "${id}" disappeared (its directory was removed).`));
          last = summary;
          onUpdate?.(summary);
          // An unverified state.json is nobody's word that the task ended: keep waiting for Caesar's own.
          if (!isActive(summary.observed) && summary.observed !== 'unverified') return finish(summary);
        } while (again && !done);
      } catch {
        // state.json unreadable for a moment (a torn write by a non-atomic writer): the next change re-checks.
      } finally {
        checking = false;
      }
    };
    const onAbort = () => finish(undefined);
    const watcher = store.watch(
      (ids) => {
        if (ids.includes(id)) void check();
      },
      undefined,
      id,
    );
    const timer = setInterval(() => {
      if (last && observedStatus(last.state) !== last.observed) void check();
    }, LIVENESS_CHECK_MS);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
    else void check();
  });
}
