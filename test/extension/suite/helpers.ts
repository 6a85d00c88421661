import { mkdirSync, renameSync, writeFileSync, appendFileSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CaesarApi, TreeItemSnapshot } from '../../../src/extension/api';
import { bindingOf, sealDocument, sealEventLine } from '../../../src/engine/store/record-seal';

export const EXTENSION_ID = 'caesar-dev.caesar-vscode';

export async function caesar(): Promise<CaesarApi> {
  const ext = vscode.extensions.getExtension<CaesarApi | undefined>(EXTENSION_ID);
  if (!ext) throw new Error(`extension ${EXTENSION_ID} is not installed in this window`);
  const api = ext.isActive ? ext.exports : await ext.activate();
  // The API exists only in the in-editor tests' build (`node esbuild.mjs --test-seams`, as run.mjs builds): what ships exports none.
  if (!api) throw new Error('the extension exported no API: no workspace folder is open, or dist/extension.js was built without --test-seams');
  await api.ready();
  return api;
}

export function workspaceDir(): string {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('the test window has no folder open');
  return folder.uri.fsPath;
}

export function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temp, file); // atomic, as every writer of a task directory does
}

export function event(taskId: string, seq: number, at: Date, body: Record<string, unknown>): string {
  return JSON.stringify({ protocol: 'caesar.event/v1', seq, at: at.toISOString(), task_id: taskId, ...body });
}

export interface HandTask {
  id: string;
  dir: string;
  appendEvents(lines: string[]): void;
  /** Rewrites state.json as the supervisor does: whole, atomically, sealed. */
  writeState(state: Record<string, unknown>): void;
}

/** Writes a task directory by hand, as a supervisor would (state.json, events.jsonl, optional result.json). */
export function handWrittenTask(
  root: string,
  id: string,
  state: Record<string, unknown>,
  events: string[] = [],
  result?: Record<string, unknown>,
): HandTask {
  const dir = path.join(root, '.caesar', 'tasks', id);
  mkdirSync(dir, { recursive: true });
  // Sealed as Caesar's writers seal them (record-seal.ts): the editor shows only records that verify.
  const binding = bindingOf(root, id);
  const sealLines = (lines: string[]) => `${lines.map((line) => sealEventLine(binding, line)).join('\n')}\n`;
  if (events.length) writeFileSync(path.join(dir, 'events.jsonl'), sealLines(events));
  if (result) writeJson(path.join(dir, 'result.json'), sealDocument('result', binding, result));
  writeJson(path.join(dir, 'state.json'), sealDocument('state', binding, {
    id,
    agent: 'fixture',
    mode: 'write',
    isolation: 'inplace',
    network: false,
    timeout_ms: 600_000,
    depth: 0,
    created_at: new Date().toISOString(),
    root,
    workspace: root,
    excluded_paths: [],
    ...state,
  }));
  return {
    id,
    dir,
    appendEvents: (lines) => appendFileSync(path.join(dir, 'events.jsonl'), sealLines(lines)),
    writeState: (next) => writeJson(path.join(dir, 'state.json'), sealDocument('state', binding, next)),
  };
}

export function find(tree: TreeItemSnapshot[], taskId: string): TreeItemSnapshot | undefined {
  return tree.find((t) => t.id === taskId);
}

/**
 * Runs a command line in a real integrated terminal (a shell started by VS Code's pty host), as a user would type it,
 * and resolves with the exit code when the terminal's process ends.
 */
export function runInTerminal(name: string, commandLine: string, env: Record<string, string> = {}): Promise<number | undefined> {
  // stderr is kept in the suite's state folder: a failing command must say why in the test output.
  const stderr = path.join(process.env.CAESAR_TEST_STATE_DIR ?? workspaceDir(), `${name.replace(/\W+/g, '-')}.stderr`);
  const line = `${commandLine} 2>${JSON.stringify(stderr)}`;
  // code-server rebuilds PATH for its processes, so the folder holding `caesar` (installed there by the driver, as a
  // user's global install would be) comes in its own variable.
  const bin = process.env.CAESAR_TEST_BIN_DIR;
  const terminal = vscode.window.createTerminal({
    name, cwd: workspaceDir(), shellPath: '/bin/sh', shellArgs: ['-c', line],
    env: { ...(bin ? { PATH: `${bin}:${process.env.PATH ?? ''}` } : {}), ...env },
  });
  return new Promise((resolve) => {
    const sub = vscode.window.onDidCloseTerminal((t) => {
      if (t !== terminal) return;
      sub.dispose();
      resolve(t.exitStatus?.code);
    });
  });
}

/**
 * Resolves once the workbench has applied every change the test made to a quick input, and every echo it sent back
 * (the active item it picked when the input was drawn) has reached this extension host. No guessed duration: the
 * extension host sends a quick input's changes in a batch one timer turn later (ExtHostQuickInput.update, a
 * setTimeout of 0), so a timer set after them fires after that batch is sent; a main-thread round trip
 * (getCommands) then answers only after the workbench handled the batch, on the same ordered channel.
 */
export async function quickInputSettled(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  await vscode.commands.getCommands(true);
}

/** Accepts the quick input on screen, as Enter does, once the workbench has what the test set in it. */
export async function acceptQuickInput(): Promise<void> {
  await quickInputSettled();
  await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Test code in the editor waits the same way as everywhere else. */
export { waitFor as until } from '../../support/wait';

export function record(name: string, value: unknown): void {
  const dir = process.env.CAESAR_TEST_STATE_DIR;
  if (!dir) return;
  appendFileSync(path.join(dir, 'figures.jsonl'), `${JSON.stringify({ name, value })}\n`);
}

/** A task's rows with its tool calls in line: the rows under it, then those under its "N tool calls" row. */
export function rowsOf(task: TreeItemSnapshot): TreeItemSnapshot[] {
  const tools = task.children.find((c) => c.contextValue === 'tools');
  return [...task.children, ...(tools?.children ?? [])];
}
