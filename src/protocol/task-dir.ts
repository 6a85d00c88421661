import { randomUUID } from 'node:crypto';
import * as path from 'node:path';

/**
 * Where everything about a task lives. The task directory is the bus between processes (DESIGN.md principle 1):
 * these names are shared by the supervisor (the only writer of its own files), the CLI, the MCP server and the
 * extension, so they are defined once, here.
 */
export const CAESAR_DIR = '.caesar';

export const TASK_FILES = {
  /** OACP: the task, written by the orchestrator before the agent starts. */
  task: 'task.json',
  /** OACP: the agent's own report, never modified by us (reference §8.16 fixed). */
  report: 'report.json',
  /** OACP: the progress stream. Single writer: the supervisor. */
  events: 'events.jsonl',
  /**
   * The agent's outbox (its CAESAR_EVENTS_PATH): an OACP agent appends its events here, never to events.jsonl; the
   * supervisor follows it and relays each line, validated, renumbered and paired, into events.jsonl.
   */
  agentEvents: 'agent-events.jsonl',
  /** OACP: raw stdout + stderr of the agent, for diagnosis. */
  rawLog: 'raw.log',
  /** The orchestrator's lifecycle record (status, pid, timestamps). Single writer: delegate() then the supervisor. */
  state: 'state.json',
  /** The normalized, git-reconciled report plus provenance and usage. Single writer: the supervisor. */
  result: 'result.json',
  /** The prompt handed to the agent (kept off argv where the agent allows it). */
  brief: 'brief.md',
  /** Requests from other processes: the existence of this file asks the supervisor to cancel. */
  cancelRequest: 'cancel.request',
  /** The strict report schema, for agents with a native structured-output tier. */
  reportSchema: 'report.schema.json',
  /** Final message written by the agent CLI itself (codex -o). */
  finalMessage: 'final-message.txt',
  /** The supervisor's own diagnostics (its stderr; as a Slurm job, the job's whole output). */
  supervisorLog: 'supervisor.log',
  /** The resolved delegation, written once by delegate() before the supervisor starts; never modified. */
  launch: 'launch.json',
  /** Written by apply(): when and what was applied (keeps state.json single-writer). */
  applied: 'applied.json',
  /** Written by discard(): the worktree was removed on purpose. */
  discarded: 'discarded.json',
  questionsDir: 'questions',
  answersDir: 'answers',
  /** Progress reported through the return channel, one file per report; the supervisor turns each into an event. */
  progressDir: 'progress',
  /** Written by the return channel beside report.json when submit_report accepted it: {sha256, submitted_at}. */
  channelReport: 'report.channel.json',
  /** Written once by delegate() when a job system took the task (Slurm: the job id); absent for a local supervisor. */
  launcher: 'launcher.json',
  /** The batch script a job system runs: `caesar supervise <taskDir>`. Written by delegate() before submitting. */
  jobScript: 'job.sh',
  /** The shared git dir as a worktree task started (engine/git/repository-watch.ts). Single writer: the supervisor. */
  repositorySnapshot: 'repository-snapshot.json',
  /** The `.git` entries below a worktree's top level as its agent started (a setup's submodules). Supervisor only. */
  nestedGitAtStart: 'nested-git-at-start.json',
  /** Where the `.git` entries the agent left in its worktree are moved after its run (engine/git/nested-git.ts). */
  nestedGitMovedAside: 'nested-git-moved-aside',
} as const;

export interface TaskPaths {
  root: string;
  dir: string;
  task: string;
  report: string;
  events: string;
  agentEvents: string;
  rawLog: string;
  state: string;
  result: string;
  brief: string;
  cancelRequest: string;
  reportSchema: string;
  finalMessage: string;
  supervisorLog: string;
  launch: string;
  applied: string;
  discarded: string;
  questionsDir: string;
  answersDir: string;
  progressDir: string;
  channelReport: string;
  launcher: string;
  jobScript: string;
  repositorySnapshot: string;
  nestedGitAtStart: string;
  nestedGitMovedAside: string;
}

export function tasksDir(root: string): string {
  return path.join(root, CAESAR_DIR, 'tasks');
}

export function worktreesDir(gitRoot: string): string {
  return path.join(gitRoot, CAESAR_DIR, 'wt');
}

export function stateDir(root: string): string {
  return path.join(root, CAESAR_DIR, 'state');
}

export function taskPaths(root: string, id: string): TaskPaths {
  assertSafeId(id, 'task id');
  const dir = path.join(tasksDir(root), id);
  // The names are plain file names and dir is already normalized: no path.join per file (`ps` builds these per task).
  const at = (name: string) => `${dir}${path.sep}${name}`;
  return {
    root,
    dir,
    task: at(TASK_FILES.task),
    report: at(TASK_FILES.report),
    events: at(TASK_FILES.events),
    agentEvents: at(TASK_FILES.agentEvents),
    rawLog: at(TASK_FILES.rawLog),
    state: at(TASK_FILES.state),
    result: at(TASK_FILES.result),
    brief: at(TASK_FILES.brief),
    cancelRequest: at(TASK_FILES.cancelRequest),
    reportSchema: at(TASK_FILES.reportSchema),
    finalMessage: at(TASK_FILES.finalMessage),
    supervisorLog: at(TASK_FILES.supervisorLog),
    launch: at(TASK_FILES.launch),
    applied: at(TASK_FILES.applied),
    discarded: at(TASK_FILES.discarded),
    questionsDir: at(TASK_FILES.questionsDir),
    answersDir: at(TASK_FILES.answersDir),
    progressDir: at(TASK_FILES.progressDir),
    channelReport: at(TASK_FILES.channelReport),
    launcher: at(TASK_FILES.launcher),
    jobScript: at(TASK_FILES.jobScript),
    repositorySnapshot: at(TASK_FILES.repositorySnapshot),
    nestedGitAtStart: at(TASK_FILES.nestedGitAtStart),
    nestedGitMovedAside: at(TASK_FILES.nestedGitMovedAside),
  };
}

/** Given a task directory, recover the caesar root and the id (`<root>/.caesar/tasks/<id>`). */
export function parseTaskDir(taskDir: string): { root: string; id: string } {
  const abs = path.resolve(taskDir);
  const id = path.basename(abs);
  const tasks = path.dirname(abs);
  const caesar = path.dirname(tasks);
  if (path.basename(tasks) !== 'tasks' || path.basename(caesar) !== CAESAR_DIR) {
    throw new Error(`Not a task directory (expected <root>/${CAESAR_DIR}/tasks/<id>): ${taskDir}`);
  }
  assertSafeId(id, 'task id');
  return { root: path.dirname(caesar), id };
}

/** `t_` + 32 lowercase hex characters (a UUIDv4 without dashes), as the reference generates. */
export function newTaskId(): string {
  return `t_${randomUUID().replaceAll('-', '')}`;
}

/** How a task id is shown to a person: `t_` + 8 hex tells tasks apart on a screen (longer where two share them). */
export const SHORT_ID_LENGTH = 10;

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Ids become file names (task dirs, questions/<id>.json): anything that could escape its folder is refused.
 * Stricter than the reference (which allows any id without `/`, `\`, NUL, `.` or `..`).
 */
export function isSafeId(id: string): boolean {
  return SAFE_ID.test(id) && id !== '.' && id !== '..';
}

export function assertSafeId(id: string, what: string): void {
  if (!isSafeId(id)) {
    throw new Error(
      `Invalid ${what} ${JSON.stringify(id)}: use 1-128 letters, digits, ".", "_" or "-", starting with a letter or digit.`,
    );
  }
}
