import { Argument, type Command } from 'commander';
import { isSafeId } from '../protocol';
import { TaskStore, type TaskView } from '../engine/tasks';
import { UsageError, type CliIo } from './io';
import { resolveRoot } from './root';

/** Options every task command takes (reference §6.1.1). */
export interface CommonOptions {
  root?: string;
  json?: boolean;
}

export function addCommonOptions(command: Command): Command {
  return command.option('--root <dir>', 'the caesar root (default: first ancestor holding .caesar/ or .git/)').option('--json', 'print JSON only');
}

/** The arguments that name tasks: the CLI turns an unambiguous prefix typed there into the whole id (cli-core.ts). */
const TASK_ID_ARGUMENTS = new WeakSet<Argument>();

/** A `<id>` / `<ids...>` argument that takes a task id or any unambiguous start of one (`t_b9b484f9`, as ps shows). */
export function taskIdArgument(spec: string, description: string): Argument {
  const argument = new Argument(spec, `${description} (or its first characters, as \`caesar ps\` shows)`);
  TASK_ID_ARGUMENTS.add(argument);
  return argument;
}

export function isTaskIdArgument(argument: Argument): boolean {
  return TASK_ID_ARGUMENTS.has(argument);
}

export function storeFor(io: CliIo, options: CommonOptions): TaskStore {
  return new TaskStore(resolveRoot(io.cwd, options.root));
}

/** A malformed id is a usage mistake (exit 2), and so is an id that names no task: the user typed it. */
export function assertTaskId(id: string): void {
  if (!isSafeId(id)) throw new UsageError(`Invalid task id ${JSON.stringify(id)}: task ids look like t_0123abcd…`);
}

export async function requireTask(store: TaskStore, id: string): Promise<TaskView> {
  assertTaskId(id);
  const view = await store.get(id);
  if (!view) throw new UsageError(`Unknown task "${id}" (looked in ${store.tasksDir}). See \`caesar ps\`.`);
  return view;
}

/**
 * Aborts when the user presses Ctrl-C (or the process is asked to stop), or when the caller's io.abort fires. Long
 * commands (watch, logs --follow, cancel --wait) end cleanly on it instead of dying mid-write.
 */
export function stopSignal(io: CliIo): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const stop = () => controller.abort();
  const onProcessSignal = () => stop();
  process.once('SIGINT', onProcessSignal);
  process.once('SIGTERM', onProcessSignal);
  if (io.abort?.aborted) stop();
  io.abort?.addEventListener('abort', stop, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onProcessSignal);
      process.off('SIGTERM', onProcessSignal);
      io.abort?.removeEventListener('abort', stop);
    },
  };
}

/** Resolves when the signal aborts. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** "a,b" (possibly repeated) → ["a", "b"]. */
export function splitList(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter(Boolean)];
}
