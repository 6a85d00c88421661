/**
 * The decision per task (auto / required / off), the finding when a task runs unconfined, the plan wrapped in bwrap,
 * and after the run, taking the agent's report files back from its view of the task folder.
 */
import { promises as fs, readdirSync, realpathSync, type Stats } from 'node:fs';
import * as path from 'node:path';
import type { SpawnPlan } from '../../agents/types';
import type { Finding, TaskPaths } from '../../protocol';
import { bwrapArgs, wrapPlan } from './bwrap';
import { AGENT_TASK_FILES, AGENT_TASK_LIVE, EMPTY_FILE, SESSION_ENV, TASK_VIEW_DIR, sandboxMounts, type Mount } from './policy';
import { sandboxPreflight, type SandboxAvailability } from './preflight';
import { agentStatePaths } from './agent-dirs';
import { openBridge, type OpenBridge } from './network-bridge';
import type { CutNetwork } from './network';
import { preparePrivateObjects } from './private-objects';
import { protectAgentConfig } from './agent-config';
import { recordKey, recordKeyPath } from '../store/record-key';

export { sandboxPreflight, locateBwrap, resetSandboxPreflight, type SandboxAvailability } from './preflight';
export { SANDBOX_MODES, DEFAULT_SANDBOX_MODE, type SandboxMode } from './mode';
import { effectiveSandboxMode, offFindings, offReason, sandboxModeDecision, type SandboxMode } from './mode';
export { effectiveSandboxMode } from './mode';
export { decideNetwork, locateSocat, type NetworkDecision, type LoopbackEndpoint, type CutNetwork } from './network';

export interface SandboxSettings {
  mode: SandboxMode;
  hide: string[];
  read_write: string[];
  allow_hosts: string[];
}

export interface SandboxRequest {
  settings?: Partial<SandboxSettings>;
  plan: SpawnPlan;
  env: NodeJS.ProcessEnv;
  agentId: string;
  mode: 'read-only' | 'write';
  workspace: string;
  worktree?: string;
  gitRoot?: string;
  paths: Pick<TaskPaths, 'root' | 'dir'>;
  /** Why this agent cannot run inside the sandbox at all (its adapter says so), when it cannot. */
  cannotBeSandboxed?: string;
  /**
   * The plan to confine instead of `plan` when the sandbox runs (AcpEntry.insideSandbox: an agent whose own sandbox
   * cannot nest in ours hands the confinement to ours). Unconfined, `plan` runs as it is.
   */
  insidePlan?: SpawnPlan;
  /**
   * Not the agent but a check Caesar runs after it (run/checks.ts): whatever it writes into its view of the task
   * folder is discarded, never taken back as the agent's report.
   */
  check?: boolean;
  /**
   * The network cut (network.ts decided it could be): a namespace of its own, with these loopback endpoints bridged
   * in by socat, and the filtering proxy when an endpoint is a host name. Absent: the host's network.
   */
  network?: CutNetwork;
  /** More read-only places to show (the supervisor's delegation socket, tasks/delegation-server.ts). */
  mounts?: Mount[];
}

export interface PreparedSandbox {
  /**
   * The plan to spawn: the agent's own, or the same inside bwrap. Called just before the spawn, once every task file
   * the agent may read exists (events.jsonl has its `started` line): those are shown to it, read-only.
   */
  wrap(): SpawnPlan;
  /** For state.json. */
  record: { confined: boolean; reason?: string };
  findings: Finding[];
  /** After the agent has ended: its report files back into the task folder; what else it wrote there, reported. */
  finish(): Promise<Finding[]>;
  /**
   * Whether the agent cannot write the working tree of the checkout at `gitRoot`: confined, and no writable mount in
   * it (or above it) but its `.git` and a `.caesar` folder, which the checkout guard does not compare anyway.
   */
  keepsCheckoutReadOnly(gitRoot: string): boolean;
}

/**
 * Whether a task with these settings will run confined, as prepareSandbox decides it (mode, the agent, the preflight):
 * known before its worktree is made, so that work only an unconfined task needs (the checkout guard) is not done.
 */
export async function sandboxWillConfine(settings: Partial<SandboxSettings> | undefined, cannotBeSandboxed: string | undefined): Promise<boolean> {
  if (effectiveSandboxMode(settings?.mode, process.env) === 'off' || cannotBeSandboxed) return false;
  return (await sandboxPreflight(process.env)).available;
}

/**
 * No mount that lets a write reach the checkout's files: none writable inside it or above it but its .git and a
 * .caesar folder. Paths are compared as bwrap binds them, links resolved (a writable link into the checkout counts).
 */
export function checkoutReadOnlyUnder(mounts: Mount[], gitRoot: string): boolean {
  const root = realOrResolved(gitRoot);
  return mounts.every((mount) => {
    if (mount.kind !== 'rw') return true; // tmpfs is the sandbox's own memory, never the host's files
    return [mount.path, mount.source ?? mount.path].map(realOrResolved).every((writable) => {
      const above = path.relative(writable, root);
      if (above === '' || isBelow(above)) return false; // the checkout itself, or a folder it is in
      const inside = path.relative(root, writable);
      if (!isBelow(inside)) return true; // elsewhere
      const parts = inside.split(path.sep);
      return parts[0] === '.git' || parts.includes('.caesar');
    });
  });
}

/** A relative path that stays below its base (not the base, not `..` or `../x`, not absolute). */
function isBelow(relative: string): boolean {
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** `[sandbox] mode = "required"` on a machine where bwrap cannot run: the task must not start. */
export class SandboxRefused extends Error {}

export async function prepareSandbox(request: SandboxRequest): Promise<PreparedSandbox> {
  // The supervisor's own environment decides (not the agent's, which the env policy may have thinned).
  const decision = sandboxModeDecision(request.settings?.mode, process.env);
  const mode = decision.mode;
  const unconfined = (reason: string, findings: Finding[] = []): PreparedSandbox => ({
    wrap: () => request.plan,
    record: { confined: false, reason },
    findings,
    finish: async () => [],
    keepsCheckoutReadOnly: () => false,
  });
  if (mode === 'off') return unconfined(offReason(decision), offFindings(decision));
  if (request.cannotBeSandboxed) {
    if (mode === 'required') throw new SandboxRefused(`Not started: [sandbox] mode = "required" and this agent cannot run sandboxed: ${request.cannotBeSandboxed}.`);
    return unconfined(request.cannotBeSandboxed, [notSandboxedFinding(request.cannotBeSandboxed)]);
  }
  const availability = await sandboxPreflight(process.env);
  if (!availability.available) {
    const why = `${availability.cause}. Fix: ${availability.fix}`;
    if (mode === 'required') throw new SandboxRefused(`Not started: [sandbox] mode = "required" and the sandbox cannot run here: ${why}.`);
    return unconfined(availability.cause, [notSandboxedFinding(why)]);
  }
  return confine(request, availability);
}

function notSandboxedFinding(why: string): Finding {
  return {
    severity: 'high',
    title: 'Not sandboxed',
    // Shown after its title ("Not sandboxed: …"): the reason alone, as a sentence.
    detail: `${why.charAt(0).toUpperCase()}${why.slice(1)}. The agent could write anywhere its user can (the repository's git dir, .caesar/, other tasks, your home). To refuse unsandboxed runs instead: [sandbox] mode = "required".`,
  };
}

async function confine(request: SandboxRequest, availability: Extract<SandboxAvailability, { available: true }>): Promise<PreparedSandbox> {
  const plan = request.insidePlan ?? request.plan;
  const taskDir = request.paths.dir;
  const taskView = path.join(taskDir, TASK_VIEW_DIR);
  const emptyFile = path.join(taskDir, EMPTY_FILE);
  await fs.rm(taskView, { recursive: true, force: true });
  await fs.mkdir(taskView, { mode: 0o700 });
  await fs.writeFile(emptyFile, '', { mode: 0o400 });
  await createStateDirs(request.agentId, request.env);
  const config = await protectAgentConfig(request.agentId, request.env, taskDir);
  const bridge: OpenBridge | undefined = request.network ? await openBridge(request.network) : undefined;
  // A write task's agent commits into a store of its own (private-objects.ts); a check commits nothing.
  const objects = request.mode === 'write' && request.worktree && request.gitRoot && !request.check ? await preparePrivateObjects(request.worktree, request.gitRoot) : undefined;
  const shown = new Set<string>();
  const mountsNow = (entries: string[]): Mount[] => [
    ...sandboxMounts(
    {
      agentId: request.agentId,
      mode: request.mode,
      cwd: plan.cwd,
      workspace: request.workspace,
      worktree: request.worktree,
      gitRoot: request.gitRoot,
      root: request.paths.root,
      taskDir,
      taskView,
      emptyFile,
      env: request.env,
      command: plan.command,
      args: plan.args,
      // The folder of Caesar's record key: an agent that could read it could seal records as Caesar (record-seal.ts).
      hide: [...absolutePaths(request.settings?.hide, request.env), recordKeyFolder()],
      readWrite: absolutePaths(request.settings?.read_write, request.env),
    },
    entries,
    ),
    ...config.mounts,
    ...(bridge?.mounts ?? []),
    ...(request.mounts ?? []),
  ];
  const wrap = (): SpawnPlan => {
    const entries = readdirSync(taskDir);
    for (const entry of entries) shown.add(entry);
    const mounts = mountsNow(entries);
    const setEnv: Record<string, string> = { CAESAR_SANDBOXED: 'bwrap', ...(objects?.env ?? {}) };
    if (!mounts.some((m) => m.kind === 'tmpfs' && m.path === request.env.TMPDIR)) setEnv.TMPDIR = '/tmp';
    const args = bwrapArgs(mounts, { cwd: plan.cwd, setEnv, unsetEnv: ['SSH_AUTH_SOCK', 'GPG_AGENT_INFO', ...SESSION_ENV], shareNet: !bridge });
    return wrapPlan(bridge ? bridge.wrapInside(plan) : plan, availability.bwrap, args);
  };
  // The task folder's entries are shown read-only: they do not change what reaches the checkout.
  const keepsCheckoutReadOnly = (gitRoot: string) => checkoutReadOnlyUnder(mountsNow([]), gitRoot);
  return { wrap, record: { confined: true }, findings: [], keepsCheckoutReadOnly, finish: async () => {
      await bridge?.close().catch(() => undefined);
      await fs.rm(emptyFile, { force: true });
      const kept = (await objects?.finish()) ?? [];
      const configured = await config.restore();
      if (!request.check) return [...kept, ...configured, ...(await takeBackReport(taskDir, taskView, shown))];
      await fs.rm(taskView, { recursive: true, force: true });
      return [];
    } };
}

/**
 * A task whose supervisor died while its sandboxed agent ran (caesar gc concludes it): the report files the agent
 * wrote are still in its view of the task folder. They are taken back as the supervisor would have (regular files
 * only), so the agent's report is not lost with its supervisor. What the supervisor had shown the agent there were the
 * task folder's own files; anything else in the view the agent created.
 */
export async function recoverSandboxReport(taskDir: string): Promise<Finding[]> {
  const taskView = path.join(taskDir, TASK_VIEW_DIR);
  if (!(await fs.lstat(taskView).catch(() => undefined))?.isDirectory()) return [];
  const shown = new Set(await fs.readdir(taskDir).catch(() => [] as string[]));
  return takeBackReport(taskDir, taskView, shown);
}

/**
 * The agent wrote its report files into its view of the task folder; they go to their real place (same file system:
 * a rename). Anything else it created there (a forged result.json, applied.json…) never reaches the task folder, nor
 * does a report file that is not a regular file (a FIFO, a symlink…): that one is refused as the report reader
 * refuses it outside the sandbox (high, "Agent report refused"), not mistaken for a file the agent may not write.
 */
async function takeBackReport(taskDir: string, taskView: string, shown: Set<string>): Promise<Finding[]> {
  const refused: string[] = [];
  const findings: Finding[] = [];
  for (const name of await fs.readdir(taskView).catch(() => [] as string[])) {
    const from = path.join(taskView, name);
    if ((AGENT_TASK_FILES as readonly string[]).includes(name)) {
      const stat = await fs.lstat(from).catch(() => undefined);
      if (stat?.isFile()) await fs.rename(from, path.join(taskDir, name));
      else if (stat) findings.push({ severity: 'high', title: 'Agent report refused', detail: `${name} was refused: it is ${fileKind(stat)}, not a regular file; discarded unread.` });
    } else if (!shown.has(name) && !(AGENT_TASK_LIVE as readonly string[]).includes(name)) {
      refused.push(name);
    }
  }
  await fs.rm(taskView, { recursive: true, force: true });
  if (!refused.length) return findings;
  const listed = refused.slice(0, 10).join(', ') + (refused.length > 10 ? ` and ${refused.length - 10} more` : '');
  return [...findings, { severity: 'medium', title: 'Sandbox kept a write out of the task folder', detail: `The agent created ${listed} in its task folder, where it may write only ${[...AGENT_TASK_FILES, ...AGENT_TASK_LIVE].join(', ')}; discarded.` }];
}

function fileKind(stat: Stats): string {
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isSocket()) return 'a socket';
  return 'a device or special file';
}

/**
 * The agent CLI's state dirs exist before it starts: a missing one could not be created inside (its parent is
 * read-only there), and the CLI would fail on its first mkdir (opencode: EROFS on ~/.local). It would create them itself.
 */
async function createStateDirs(agentId: string, env: NodeJS.ProcessEnv): Promise<void> {
  for (const state of agentStatePaths(agentId, env)) {
    if (!state.file) await fs.mkdir(state.path, { recursive: true, mode: 0o700 }).catch(() => undefined);
    else if (state.initial !== undefined) await fs.writeFile(state.path, state.initial, { flag: 'wx', mode: 0o600 }).catch(() => undefined);
  }
}

/** `~/x` against the agent's HOME; relative or empty entries are dropped (a sandbox path must be absolute). */
/** `[sandbox] hide` as absolute paths (`~` is the agent's HOME): what the ACP client must not serve either. */
export function hiddenByPolicy(settings: Partial<SandboxSettings> | undefined, env: NodeJS.ProcessEnv): string[] {
  return absolutePaths(settings?.hide, env);
}

function absolutePaths(paths: string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME;
  return (paths ?? [])
    .map((p) => (p === '~' || p.startsWith('~/') ? (home ? path.join(home, p.slice(1)) : '') : p))
    .filter((p) => path.isAbsolute(p))
    .map((p) => path.resolve(p));
}

/** The record key's folder, the key made first if need be: a folder that exists is one the sandbox can hide. */
function recordKeyFolder(): string {
  recordKey();
  return path.dirname(recordKeyPath());
}
