import { randomBytes } from 'node:crypto';
import { writeSealedJson } from '../../src/engine/store/record-seal';
import { promises as fs } from 'node:fs';
import { writeJsonAtomic } from '../../src/base/atomic';
import { initialState } from '../../src/engine/launch/delegate';
import { DOCUMENT_IDS, parseLaunchSpec, parseTask, taskPaths, type Task } from '../../src/protocol';
import { buildCli, makeRepo } from '../engine/runtime/helpers';

/**
 * The CLI bundle (src/bin/caesar.ts, built from the current sources by the runtime helpers): it serves
 * `caesar channel serve --task-dir <dir>` and runs the supervisor. CAESAR_CLI_JS points at it, so the supervisor
 * writes its path into task.json's channel coordinates.
 */
export function buildChannelCli(): Promise<string> {
  return buildCli();
}

/** A task directory as the supervisor leaves it before the agent starts: task.json (and state.json's start time). */
export async function makeTaskDir(over: Partial<Task> = {}): Promise<{ root: string; id: string; dir: string }> {
  const root = makeRepo();
  const id = `t_${randomBytes(16).toString('hex')}`;
  const paths = taskPaths(root, id);
  await fs.mkdir(paths.dir, { recursive: true });
  const task = parseTask({
    protocol: DOCUMENT_IDS.task,
    id,
    created_at: new Date().toISOString(),
    agent: 'codex',
    objective: 'Fix the parser',
    mode: 'write',
    isolation: 'inplace',
    workspace: root,
    deadline_ms: 600_000,
    depth: 1,
    report_path: paths.report,
    events_path: paths.events,
    ...over,
  });
  await writeJsonAtomic(paths.task, task);
  const launch = parseLaunchSpec({ id, root, workspace: root, agent: 'codex', objective: task.objective, mode: 'write', isolation: 'inplace', network: true, timeout_ms: task.deadline_ms, created_at: task.created_at });
  await writeSealedJson(paths.state, 'state', { ...initialState(launch), status: 'running', started_at: task.created_at, phase: undefined });
  return { root, id, dir: paths.dir };
}
