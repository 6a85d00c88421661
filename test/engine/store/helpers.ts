import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { taskPaths } from '../../../src/protocol';
import type { TaskState } from '../../../src/protocol';
import { bindingOf, sealDocument, sealEventLine } from '../../../src/engine/store/record-seal';

export function tempRoot(): string {
  return mkdtempSync(path.join(tmpdir(), 'caesar-store-'));
}

export function writeState(root: string, id: string, patch: Partial<TaskState> = {}): TaskState {
  const paths = taskPaths(root, id);
  mkdirSync(paths.dir, { recursive: true });
  const state: TaskState = {
    id,
    status: 'running',
    agent: 'demo',
    objective: `objective of ${id}`,
    mode: 'write',
    isolation: 'worktree',
    network: true,
    timeout_ms: 60000,
    depth: 1,
    created_at: new Date().toISOString(),
    root,
    workspace: root,
    excluded_paths: [],
    supervisor_pid: process.pid,
    ...patch,
  };
  // As Caesar's writer writes it: sealed for this task under this root (record-seal.ts).
  writeFileSync(paths.state, JSON.stringify(sealDocument('state', bindingOf(root, id), state)));
  return state;
}

/** One events.jsonl line as Caesar's EventsWriter writes it (sealed for this task under this root). */
export function eventLine(root: string, id: string, seq: number, extra: Record<string, unknown> = { type: 'message', text: `m${seq}` }): string {
  return `${sealEventLine(bindingOf(root, id), JSON.stringify({ protocol: 'caesar.event/v1', seq, at: new Date().toISOString(), task_id: id, ...extra }))}\n`;
}

/** The same line without Caesar's seal: what anyone else could append. */
export function unsealedEventLine(id: string, seq: number, extra: Record<string, unknown> = { type: 'message', text: `m${seq}` }): string {
  return `${JSON.stringify({ protocol: 'caesar.event/v1', seq, at: new Date().toISOString(), task_id: id, ...extra })}\n`;
}

