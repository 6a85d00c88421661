import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Finding } from '../../protocol';
import type { AgentAdapter, SpawnPlan } from '../../agents/types';
import { guardCheckout, snapshotWithIgnored } from '../git/checkout-guard';
import { CAESAR_FOLDERS, recordNestedGitAtStart } from '../git/nested-git';
import { repoState, type RepoState, type WorktreeRepo } from '../git/git';
import type { LaunchSpec } from '../../protocol';
import { inplaceDiff, worktreeDiff, type DiffOptions, type DiffResult, type ReconcileOptions, type Snapshot } from '../git/reconcile';
import type { StateWriter } from './state-writer';
import { detectWorkshop, materialize, workshopFinding } from '../git/workshop';
import { createWorktree, defaultBranch, recordWorktreeOwner, worktreeIgnoreFinding } from '../git/worktree';
import { refillPool, takeWarmWorktree } from '../git/worktree-pool';
import { acquireWorkspaceWriter, type WriterLease } from '../store/writer-lock';
import { pinBaseRef, takeRepositorySnapshot, type RepositorySnapshot } from '../git/repository-watch';
import { taskPaths } from '../../protocol';
import { writeJsonAtomic } from '../../base/atomic';

/** Where the agent works and what the orchestrator laid down there. */
export interface Placement {
  isolation: 'inplace' | 'worktree';
  /** The agent's cwd / task.workspace: the worktree (mapped to the same subfolder) or the user's workspace. */
  workspace: string;
  gitRoot?: string;
  /** `repo`: its folder and git dir read at its creation, so the end's diff checks them without a git process. */
  worktree?: { path: string; branch: string; base_ref: string; repo?: WorktreeRepo };
  /** Repository-relative paths excluded from the diff with prefix semantics. */
  excluded: string[];
  /** The workspace's folder relative to its repository root ('' at the root). */
  prefix: string;
  snapshot?: Snapshot;
  /** With `[worktree] pool`: tops the repository's warm pool up again; the supervisor calls it once the agent runs. */
  refillPool?: () => Promise<void>;
  /**
   * A worktree task's view of the user's checkout at its start, when the agent could write it (unconfined): writes
   * into it are reported, not prevented. A confined agent's sandbox mounts the checkout read-only instead.
   */
  checkout?: Snapshot;
  /** A worktree task's record of the shared git dir at its start (repository-watch.ts), compared at its end. */
  repository?: RepositorySnapshot;
  findings: Finding[];
}

/** Said of a worktree that stands in for a read-only mode, unless the sandbox confines the task (findingsOnceConfined). */
const NOT_A_SANDBOX = ' (a worktree is no sandbox: writes outside it are detected afterwards, not prevented)';
const READ_ONLY_NOT_GUARANTEED = 'Read-only not guaranteed';

/**
 * The isolation findings of a read-only task once the sandbox confines it: its workspace is mounted read-only, so the
 * read-only constraint no longer rests on the agent's word, and writes are refused, not only detected afterwards.
 */
export function findingsOnceConfined(findings: Finding[], mode: LaunchSpec['mode']): Finding[] {
  if (mode !== 'read-only') return findings;
  return findings
    .filter((f) => f.title !== READ_ONLY_NOT_GUARANTEED)
    .map((f) => (f.title === 'Degraded isolation' ? { ...f, detail: f.detail.replace(NOT_A_SANDBOX, ' (the sandbox mounts it read-only too: a write is refused, not only detected)') } : f));
}

/** Reference §2.3 — the isolation actually used, with the findings the decision implies. */
export function decideIsolation(
  launch: Pick<LaunchSpec, 'isolation' | 'mode' | 'allow_inplace_write'>,
  adapter: Pick<AgentAdapter, 'capabilities' | 'displayName'>,
  repo: RepoState,
): { isolation: 'inplace' | 'worktree'; findings: Finding[] } {
  const usable = repo.kind === 'usable';
  const requested = launch.isolation;
  const unusable = repo.kind === 'usable' ? '' : `${repo.message} ${repo.remedy}`;
  if (requested === 'worktree' && !usable) throw new Error(`Worktree isolation is impossible: ${unusable}`);
  if (launch.mode === 'read-only' && !adapter.capabilities.nativeReadOnly) {
    if (usable) {
      const findings: Finding[] =
        requested === 'inplace'
          ? [{ severity: 'low', title: 'Degraded isolation', detail: `In-place was requested, but ${adapter.displayName} has no native read-only mode: the read-only task ran in a worktree instead, so its edits did not land in your checkout${NOT_A_SANDBOX}.` }]
          : [];
      return { isolation: 'worktree', findings };
    }
    return {
      isolation: 'inplace',
      findings: [{ severity: 'low', title: READ_ONLY_NOT_GUARANTEED, detail: `${adapter.displayName} has no native read-only mode and no worktree was possible, so the read-only constraint rests on the agent's word. ${unusable}` }],
    };
  }
  if (requested === 'worktree') return { isolation: 'worktree', findings: [] };
  // The same rule resolveDelegation applies before a task exists; here it guards launches that did not go through it.
  const allowInPlace =
    'To let agents edit your files directly: `caesar policy set allow_inplace_write true` (sets allow_inplace_write in [policy] of .caesar/config.toml).';
  if (requested === 'inplace') {
    if (launch.mode === 'write' && !launch.allow_inplace_write) {
      throw new Error(`Writing in place is refused: the policy does not allow in-place writes (allow_inplace_write = false). Use isolation "worktree" or "auto". ${allowInPlace}`);
    }
    return { isolation: 'inplace', findings: [] };
  }
  if (launch.mode === 'write') {
    if (usable) return { isolation: 'worktree', findings: [] };
    if (!launch.allow_inplace_write) {
      throw new Error(`Writing in place is refused: no worktree is possible and the policy does not allow in-place writes (allow_inplace_write = false). ${unusable} ${allowInPlace}`);
    }
    return { isolation: 'inplace', findings: [{ severity: 'low', title: 'Degraded isolation', detail: `The agent wrote directly in your workspace: no worktree was possible. ${unusable}` }] };
  }
  return { isolation: 'inplace', findings: [] };
}

export interface PrepareContext {
  /** The caesar root and the task id: the writer lease and the worktree are recorded under them. */
  root: string;
  id: string;
  state: StateWriter;
  signal: AbortSignal;
  /**
   * Called as soon as the in-place writer lease is taken, before anything else can fail, so the caller releases it
   * whatever happens next.
   */
  holdLease(lease: WriterLease): void;
  /**
   * The sandbox will confine the agent (sandboxWillConfine): a worktree task's checkout guard is then not taken here,
   * and the supervisor takes it before the agent starts only if the sandbox leaves the checkout writable after all.
   */
  confined?: boolean;
}

/** Isolation (reference §2.3, inside the slot: §8.12 fixed), worktree + workshop, or the in-place snapshot. */
export async function preparePlacement(launch: LaunchSpec, adapter: AgentAdapter, ctx: PrepareContext): Promise<Placement> {
  const repo = await repoState(launch.workspace);
  const decision = decideIsolation(launch, adapter, repo);
  const findings = [...decision.findings];
  const usable = repo.kind === 'usable' ? repo : undefined;
  const gitRoot = usable?.gitRoot;
  const prefix = gitRoot ? await workspacePrefix(gitRoot, launch.workspace) : '';
  if (decision.isolation === 'inplace' && launch.mode === 'write') {
    ctx.holdLease(await acquireWorkspaceWriter(ctx.root, launch.workspace, ctx.id));
  }
  if (decision.isolation === 'inplace') {
    // The checkout's own repositories (submodules) stay; a .git the agent adds in it is moved aside after the run.
    if (launch.mode === 'write') await recordNestedGitAtStart(launch.workspace, taskPaths(ctx.root, ctx.id).nestedGitAtStart, CAESAR_FOLDERS);
    const snapshot = usable ? await snapshotWithIgnored(launch.workspace, usable, taskPaths(ctx.root, ctx.id).dir) : undefined;
    return { isolation: 'inplace', workspace: launch.workspace, gitRoot, excluded: [], prefix, snapshot, findings };
  }
  // Written in call order by the state writer while the worktree is being created; awaited before the next update.
  const phase = ctx.state.update({ phase: 'creating the worktree' });
  phase.catch(() => undefined); // its failure is reported by the await below, not as an unhandled rejection
  // Recording the caesar root lets gc run from another root of the same repository tell this worktree from an orphan.
  const continued = launch.base_commit ? { startPoint: launch.base_commit, baseRef: `${launch.base_commit}^1` } : {};
  const setup = launch.worktree_setup;
  const pool = launch.worktree_pool ?? 0;
  const fresh = () => createWorktree({ gitRoot: gitRoot!, id: ctx.id, root: ctx.root, head: usable!.head, ...continued });
  // Making the worktree is the longest step, started first: `git worktree add` (spawned synchronously, at the commit
  // repoState resolved), or a warm worktree's hand-out (claim, move, checkout of what differs, clean).
  const creating = pool
    ? takeWarmWorktree({ gitRoot: gitRoot!, id: ctx.id, branch: defaultBranch(ctx.id), ...continued }).then(async (warm) => {
        if (!warm) return fresh();
        await recordWorktreeOwner(warm.path, ctx.root);
        return warm;
      })
    : fresh();
  // What does not depend on the new worktree runs while it is being made (issue 14): the checkout guard's snapshot
  // (before, a warm hand-out and the snapshot ran one after the other: 65 ms of 1 s at 10k files) and the findings' git calls.
  // A confined agent cannot write the checkout (its sandbox mounts it read-only): nothing to detect afterwards, and
  // the snapshot is the largest git work of a task's start (an `add -A` of the whole checkout into a scratch index).
  const checkout = ctx.confined ? Promise.resolve(undefined) : guardCheckout(gitRoot!, usable, taskPaths(ctx.root, ctx.id).dir);
  const suggestion = !setup.copy.length && !setup.link.length ? detectWorkshop(launch.workspace).catch(() => undefined) : undefined;
  const ignored = worktreeIgnoreFinding(gitRoot!, ctx.id).catch(() => undefined);
  const worktree = await creating;
  // Pinned before the agent starts: no prune, reset or deleted branch can take the commit every diff is taken against.
  // The watch's snapshot follows the pin, so the pin is part of what must stay as it was.
  await pinBaseRef(gitRoot!, ctx.id, worktree.base_ref);
  const watching = watchRepository(gitRoot!, ctx);
  watching.catch(() => undefined); // a failure becomes a finding below, never an unhandled rejection if a step between throws
  await phase;
  await ctx.state.update({ isolation: 'worktree', worktree: worktree.path, branch: worktree.branch, base_ref: worktree.base_ref });
  const suggested = await suggestion;
  if (suggested) findings.push(workshopFinding(suggested));
  const ignoreFinding = await ignored;
  if (ignoreFinding) findings.push(ignoreFinding);
  // Before the setup command (the user's own, trusted) runs: what it does to the git dir is not the agent's doing.
  const repository = await watching.catch((err: unknown) => {
    findings.push({ severity: 'high', title: 'Repository not watched', detail: `The shared git dir could not be recorded at the task's start (${err instanceof Error ? err.message : String(err)}): changes the agent makes to its hooks, config or refs will not be reported.` });
    return undefined;
  });
  let excluded: string[] = [];
  if (setup.copy.length || setup.link.length || setup.setup.length) {
    await ctx.state.update({ phase: setup.setup.length ? 'setting up the worktree' : 'laying down the workshop' });
    const placed = await materialize({
      workspace: launch.workspace,
      worktree: worktree.path,
      copy: setup.copy,
      link: setup.link,
      setup: setup.setup,
      signal: ctx.signal,
    });
    excluded = placed.excluded_paths;
    findings.push(...placed.findings);
    await ctx.state.update({ excluded_paths: excluded });
    // What the setup made (a submodule's .git) is the task's own: only a .git the agent adds is moved aside after it.
    await recordNestedGitAtStart(worktree.path, taskPaths(ctx.root, ctx.id).nestedGitAtStart);
  }
  return {
    isolation: 'worktree',
    workspace: prefix ? path.join(worktree.path, prefix) : worktree.path,
    gitRoot,
    worktree,
    excluded,
    prefix,
    checkout: await checkout,
    ...(repository ? { repository } : {}),
    findings,
    ...(pool ? { refillPool: () => refillPool({ gitRoot: gitRoot!, size: pool }).then(() => undefined) } : {}),
  };
}

/** The shared git dir as the task starts, kept in the task folder too (gc concludes a task whose supervisor died). */
async function watchRepository(gitRoot: string, ctx: PrepareContext): Promise<RepositorySnapshot> {
  const snapshot = await takeRepositorySnapshot(gitRoot, ctx.id);
  await writeJsonAtomic(taskPaths(ctx.root, ctx.id).repositorySnapshot, snapshot);
  return snapshot;
}

/** Workshop paths plus the files the adapter laid down itself (relative to the agent's workspace → repository-relative). */
export function excludedFor(placement: Placement, plan: SpawnPlan): string[] {
  const own = (plan.excludeFromDiff ?? []).map((p) => (placement.prefix ? `${placement.prefix}/${toPosix(p)}` : toPosix(p)));
  return [...placement.excluded, ...own];
}

/**
 * What the agent changed: against the worktree's base, or against the in-place snapshot; nothing outside git.
 * `{ patch: false }` when only the files and their counts are needed (the supervisor's result.json keeps no patch).
 */
export async function computeDiff(placement: Placement, excluded: string[], options: DiffOptions = {}): Promise<DiffResult | undefined> {
  const { worktree } = placement;
  if (worktree) return worktreeDiff(worktree.path, worktree.base_ref, excluded, options, worktree.repo);
  if (placement.snapshot) return inplaceDiff(placement.workspace, placement.snapshot, excluded, options);
  return undefined;
}

/** The workspace's folder relative to its repository root ('' at the root), '/'-separated like git's paths. */
export async function workspacePrefix(gitRoot: string, workspace: string): Promise<string> {
  return toPosix(path.relative(gitRoot, await fs.realpath(workspace)));
}

/**
 * How the agent's declared paths map onto the diff's: absolute ones under the worktree or the repository become
 * repository-relative, relative ones are taken from the agent's folder. The supervisor and gc's conclusion of a lost
 * task reconcile with the same scope.
 */
export function reconcileScope(where: { worktreePath?: string; gitRoot?: string; prefix: string }): ReconcileOptions {
  return {
    roots: [where.worktreePath, where.gitRoot].filter((r): r is string => Boolean(r)),
    prefix: where.prefix,
  };
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}
