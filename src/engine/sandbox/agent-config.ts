import { promises as fs, lstatSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';
import type { Finding } from '../../protocol';
import { agentConfigPaths } from './agent-dirs';
import { CONFIG_COPIES_DIR, CONFIG_DISCARDED_DIR, type Mount } from './policy';

/**
 * The agent CLI's own state stays writable inside the sandbox (sessions, caches, token refresh), and it is the same
 * folder the user's own runs of that CLI read outside Caesar, unconfined. Some of what lies there names programs the
 * CLI runs or instructions it follows (claude's settings.json hooks and ~/.claude.json MCP servers, codex's
 * config.toml `notify` and MCP servers, gemini's settings.json and .env, opencode's plugins, commands, agents…): an
 * agent that wrote there would run its program as the user the next time they start that CLI. So, for the run:
 *  - an existing file of that list is a private copy (writable: the CLIs rewrite some of them as they run), dropped
 *    after it;
 *  - an existing folder of that list is read-only;
 *  - whatever the agent created at a name of that list that was absent (or put in place of a link) is moved out of
 *    the user's folder into the task folder after the run, with a high finding naming it.
 * Between the agent writing such a new file and the end of the run, a CLI the user starts outside Caesar could read
 * it: the window this leaves.
 */
export interface ProtectedConfig {
  mounts: Mount[];
  /** After the run: what the agent created among those names, moved aside. */
  restore(): Promise<Finding[]>;
}

type Before = { path: string; kind: 'file' | 'dir' | 'absent' } | { path: string; kind: 'link'; target: string } | { path: string; kind: 'other' };

export async function protectAgentConfig(agentId: string, env: NodeJS.ProcessEnv, taskDir: string): Promise<ProtectedConfig> {
  const copies = path.join(taskDir, CONFIG_COPIES_DIR);
  await fs.rm(copies, { recursive: true, force: true });
  await fs.mkdir(copies, { mode: 0o700 });
  const before = agentConfigPaths(agentId, env).map(snapshot);
  const mounts: Mount[] = [];
  for (const [i, entry] of before.entries()) {
    if (entry.kind === 'dir') mounts.push({ kind: 'ro', path: entry.path, optional: true });
    if (entry.kind !== 'file') continue;
    const copy = path.join(copies, String(i));
    // COPYFILE_EXCL, and lstat said a regular file: a link swapped in meanwhile fails the copy, and nothing is bound.
    const copied = await fs.copyFile(entry.path, copy, fs.constants.COPYFILE_EXCL).then(() => true, () => false);
    if (copied) mounts.push({ kind: 'rw', path: entry.path, source: copy, optional: true });
  }
  return { mounts, restore: () => restore(before, copies, path.join(taskDir, CONFIG_DISCARDED_DIR)) };
}

function snapshot(p: string): Before {
  try {
    const stat = lstatSync(p);
    if (stat.isSymbolicLink()) return { path: p, kind: 'link', target: readlinkSync(p) };
    return { path: p, kind: stat.isFile() ? 'file' : stat.isDirectory() ? 'dir' : 'other' };
  } catch {
    return { path: p, kind: 'absent' };
  }
}

function unchanged(entry: Before): boolean {
  const now = snapshot(entry.path);
  if (entry.kind === 'link') return now.kind === 'link' && now.target === entry.target;
  // A file or folder was a mount point for the run: the agent could neither remove nor replace it.
  return now.kind === entry.kind;
}

async function restore(before: Before[], copies: string, discarded: string): Promise<Finding[]> {
  const moved: string[] = [];
  for (const [i, entry] of before.entries()) {
    if (unchanged(entry)) continue;
    await fs.mkdir(discarded, { recursive: true, mode: 0o700 });
    // Moved, not deleted: the user's own CLI may have written it meanwhile. Same file system as a rule (the home).
    const aside = path.join(discarded, `${i}-${path.basename(entry.path)}`);
    const done = await fs.rename(entry.path, aside).then(() => true, () => fs.rm(entry.path, { recursive: true, force: true }).then(() => true, () => false));
    if (done && entry.kind === 'link') await fs.symlink(entry.target, entry.path).catch(() => undefined);
    moved.push(entry.path);
  }
  await fs.rm(copies, { recursive: true, force: true });
  if (!moved.length) return [];
  return [
    {
      severity: 'high',
      title: 'Agent wrote its CLI\'s own configuration',
      detail: `The agent created ${moved.join(', ')}, which its CLI reads when you run it yourself outside Caesar (it can name programs to run). Caesar moved ${moved.length === 1 ? 'it' : 'them'} to ${discarded}; look before you restore anything.`,
    },
  ];
}
