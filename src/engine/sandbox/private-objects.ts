import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Finding } from '../../protocol';
import { runGit } from '../git/git';
import { worktreeGitEntry } from './policy';
import { pinRegistration, type PinnedRegistration } from './git-entry';

/**
 * Commits inside a sandboxed worktree (issue 21, item 2). The shared object store stays read-only to the agent (a
 * writable one would let it delete the user's pack files), so the agent's git writes objects into a private store,
 * `<repo>/.git/worktrees/<name>/objects` (inside the worktree's own entry, which it may write), with the repository's
 * objects as a read-only alternate. Its branch ref lives in the shared, read-only refs/ too: for the run, the
 * worktree's HEAD is detached at the same commit (a per-worktree file), so `git commit` moves only that.
 *
 * After the run Caesar brings back what the agent's HEAD and index reach, through `git index-pack` (which checks
 * every object it writes), moves the task's branch there and re-attaches HEAD, and drops the private store: from then
 * on every git call, Caesar's and the user's (`gc`, `fsck`), sees one consistent repository. Objects the agent
 * wrote that nothing reaches are not brought back.
 */
export interface PrivateObjects {
  /** For the agent: where its git writes objects, and where it reads the repository's. */
  env: Record<string, string>;
  finish(): Promise<Finding[]>;
}

export async function preparePrivateObjects(worktree: string, gitRoot: string): Promise<PrivateObjects | undefined> {
  const entry = worktreeGitEntry(worktree, gitRoot);
  if (!entry) return undefined;
  const store = path.join(entry, 'objects');
  const common = path.dirname(path.dirname(entry));
  const shared = path.join(common, 'objects');
  const registration = await pinRegistration(worktree, entry);
  await fs.rm(store, { recursive: true, force: true });
  await fs.mkdir(path.join(store, 'pack'), { recursive: true });
  // HEAD is read and written as the file it is (one git process instead of three: this runs before every write task).
  const headFile = path.join(entry, 'HEAD');
  const branch = /^ref: (refs\/heads\/\S+)\s*$/.exec(await fs.readFile(headFile, 'utf8'))?.[1] ?? '';
  const start = (await git(['rev-parse', '--verify', 'HEAD^{commit}'], worktree)).trim();
  await writeHead(headFile, start);
  const env = { GIT_OBJECT_DIRECTORY: store, GIT_ALTERNATE_OBJECT_DIRECTORIES: shared };
  // After the run git is told where everything is: the agent may have rewritten the files discovery reads.
  const pinned = { GIT_DIR: entry, GIT_COMMON_DIR: common, GIT_WORK_TREE: worktree };
  return { env, finish: () => bringBack({ worktree, gitRoot, store, env, pinned, start, branch, headFile, registration }) };
}

interface Run {
  worktree: string;
  gitRoot: string;
  store: string;
  env: Record<string, string>;
  /** GIT_DIR, GIT_COMMON_DIR and GIT_WORK_TREE as they were before the run. */
  pinned: Record<string, string>;
  start: string;
  branch: string;
  headFile: string;
  registration: PinnedRegistration;
}

/** A worktree's HEAD file, replaced whole (a rename): a commit id (detached) or `ref: <branch>`. */
async function writeHead(headFile: string, value: string): Promise<void> {
  const temp = `${headFile}.caesar-${process.pid}`;
  // The agent may write this folder: whatever it left at the temporary name (a link) goes, and O_EXCL never follows one.
  await fs.rm(temp, { force: true });
  await fs.writeFile(temp, `${value}\n`, { flag: 'wx' });
  await fs.rename(temp, headFile);
}

async function bringBack(run: Run): Promise<Finding[]> {
  const findings: Finding[] = [];
  await run.registration.restore();
  // Alternates the agent listed in its store would bring another repository's objects in: only the shared one counts.
  await fs.rm(path.join(run.store, 'info'), { recursive: true, force: true });
  const inStore = { ...run.pinned, ...run.env };
  let head = run.start;
  try {
    head = (await git(['rev-parse', '--verify', 'HEAD^{commit}'], run.worktree, inStore)).trim();
    // An empty store: the agent wrote no object (no commit, no `git add`), so what its HEAD and index reach is in the
    // shared store already. Three git processes less for most tasks, and no pack of copies added to the repository.
    const ids = (await holdsObjects(run.store)) ? await reachedObjects(run, head, inStore) : [];
    if (ids.length) {
      const pack = await runGit(['pack-objects', '--stdout', '-q'], { cwd: run.worktree, env: inStore, input: `${ids.join('\n')}\n` });
      await runGit(['index-pack', '--stdin'], { cwd: run.gitRoot, input: pack.stdout });
    }
  } catch (err) {
    head = run.start;
    findings.push({ severity: 'medium', title: 'The agent\'s commits were not kept', detail: `Its worktree's files are reviewed as they are, but its commits could not be brought back from the sandbox: ${(err as Error).message}` });
    // The index may name objects of the private store: rebuilt from the start commit, the files stay as they are.
    await git(['read-tree', run.start], run.worktree, run.pinned).catch(() => undefined);
  }
  try {
    // The branch moves only when the agent committed; HEAD goes back on it (or stays detached, as it was).
    if (run.branch && head !== run.start) await git(['update-ref', run.branch, head], run.worktree, run.pinned);
    await writeHead(run.headFile, run.branch ? `ref: ${run.branch}` : head);
  } catch (err) {
    findings.push({ severity: 'medium', title: 'The task\'s branch was not moved', detail: `After the run, its worktree's HEAD could not be put back on ${run.branch || 'its commit'}: ${(err as Error).message}` });
  }
  await fs.rm(run.store, { recursive: true, force: true });
  return findings;
}

/** What the agent's HEAD and index reach that its start commit does not: what a pack brings back. */
async function reachedObjects(run: Run, head: string, inStore: Record<string, string>): Promise<string[]> {
  const objects = await git(['rev-list', '--objects', '--indexed-objects', head, '--not', run.start], run.worktree, inStore);
  return objects.split('\n').map((line) => line.split(' ')[0]!).filter((id) => !!id);
}

/**
 * Whether the private store holds any object: a loose one (`xx/` folders) or a pack. Anything else there (its `info`
 * is removed before, an empty `pack/` is made by Caesar) is no object git would find.
 */
async function holdsObjects(store: string): Promise<boolean> {
  for (const entry of await fs.readdir(store, { withFileTypes: true })) {
    if (entry.name === 'pack' && entry.isDirectory()) {
      if ((await fs.readdir(path.join(store, 'pack'))).length) return true;
    } else {
      return true; // a loose-object folder, or something the agent put there: looked at with git, as before
    }
  }
  return false;
}

async function git(args: string[], cwd: string, env?: Record<string, string>): Promise<string> {
  return (await runGit(args, { cwd, ...(env ? { env } : {}) })).stdout.toString('utf8');
}
