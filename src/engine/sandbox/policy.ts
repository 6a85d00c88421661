import { lstatSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { TASK_FILES } from '../../protocol';
import { testSwitch } from '../../base/test-switches';
import { agentStatePaths, otherAgentsStatePaths } from './agent-dirs';
import { neededUnderServiceFolders, serviceFolders, socketsToCover } from './host-sockets';

/**
 * What one task's agent may see and write, as an ordered list of mounts (later ones win over earlier ones, as in
 * bwrap): the whole system read-only, a private /tmp, then the few places the task owns made writable again.
 */
export type Mount =
  | { kind: 'ro' | 'rw'; path: string; source?: string; optional?: boolean }
  | { kind: 'tmpfs'; path: string }
  /** bwrap's own minimal /dev (null, zero, random, tty, a private /dev/shm…) and the PID namespace's /proc. */
  | { kind: 'dev' | 'proc'; path: string }
  /** A file hidden: an empty file bound over it. */
  | { kind: 'empty'; path: string; source: string };

export interface SandboxInput {
  agentId: string;
  mode: 'read-only' | 'write';
  /** The agent's cwd. */
  cwd: string;
  /** The directory the agent writes (worktree root, or the checkout in place); undefined = writes nothing. */
  workspace: string;
  worktree?: string;
  gitRoot?: string;
  /** The caesar root (its .caesar/ holds config.toml and every task). */
  root: string;
  taskDir: string;
  /** The agent's view of its task directory (see TASK_VIEW_DIR). */
  taskView: string;
  /** An empty file bound over each hidden file (a /dev/null bound there would be unreadable: bwrap mounts nodev). */
  emptyFile: string;
  /** The agent's environment (HOME, XDG_*, CODEX_HOME, TMPDIR, PATH decide paths). */
  env: NodeJS.ProcessEnv;
  command: string;
  args: string[];
  hide: string[];
  readWrite: string[];
}

/** Under the task dir: the host side of the agent's view of its task directory, rebuilt for every run. */
export const TASK_VIEW_DIR = 'sandbox-view';
/** Under the task dir: the empty file hidden files are replaced with. */
export const EMPTY_FILE = 'sandbox-empty';
/** Under the task dir: private copies of the agent CLI's configuration, and what it created there (agent-config.ts). */
export const CONFIG_COPIES_DIR = 'sandbox-config';
export const CONFIG_DISCARDED_DIR = 'sandbox-config-discarded';

/** The task-dir entries an agent may write (the contract's, plus the files its CLI writes as the report). */
export const AGENT_TASK_FILES = [TASK_FILES.report, TASK_FILES.channelReport, TASK_FILES.finalMessage] as const;
/** Entries shared live with the supervisor (it follows them during the run): the real ones, writable. */
export const AGENT_TASK_LIVE = [TASK_FILES.agentEvents, TASK_FILES.questionsDir, TASK_FILES.progressDir] as const;
/** Never shown inside: the view itself. */
/*
 * Not shown in the agent's view of its task folder: the view's own parts, the agent's files (handled apart), and
 * state.json — the supervisor's record, which no agent reads (the contract gives it task.json) and which the supervisor
 * rewrites (a rename) the moment the agent's process starts: bwrap binding it at that instant failed the task ("Can't
 * bind mount …/state.json", 1 live run in ~6). An empty read-only file stands at its name instead (taskDirMounts).
 */
const NOT_SHOWN = new Set<string>([TASK_VIEW_DIR, EMPTY_FILE, CONFIG_COPIES_DIR, CONFIG_DISCARDED_DIR, TASK_FILES.state, ...AGENT_TASK_FILES, ...AGENT_TASK_LIVE]);

/** Credentials of the user's other tools: hidden from every agent, whatever it is. */
export const SECRET_PATHS = ['.ssh', '.gnupg', '.aws', '.azure', '.config/gcloud', '.config/gh', '.docker', '.kube', '.netrc', '.git-credentials', '.npmrc', '.pypirc', '.password-store', '.local/share/keyrings'];

export function sandboxMounts(input: SandboxInput, taskDirEntries: string[]): Mount[] {
  const mounts: Mount[] = [
    { kind: 'ro', path: '/' },
    { kind: 'dev', path: '/dev' },
    { kind: 'proc', path: '/proc' },
    { kind: 'tmpfs', path: '/tmp' },
    // The system's service sockets (host-sockets.ts): /run whole, what name resolution needs shown again.
    ...serviceFolders().map((folder): Mount => ({ kind: 'tmpfs', path: folder })),
  ];
  for (const p of neededUnderServiceFolders()) mounts.push({ kind: 'ro', path: p, optional: true });
  // The private /tmp and /dev/shm hide what lives there on the host: what the agent needs is shown again, read-only.
  const shownUnderTmp = neededUnderTmp(input);
  for (const p of shownUnderTmp) mounts.push({ kind: 'ro', path: p, optional: true });
  // The user's read_write folders come before what Caesar hides and guards, so those win below them: a read_write of
  // `~` must not show `~/.ssh` nor make a repository's `.git` writable. Naming that very path opens it; naming a path
  // inside one opens that path alone (mounted again below, after them).
  for (const p of input.readWrite) mounts.push({ kind: 'rw', path: p, optional: true });
  const hidden = hiddenMounts(input);
  const guards = repositoryGuards(input);
  mounts.push(...hidden);
  if (input.mode === 'write') mounts.push({ kind: 'rw', path: input.workspace });
  mounts.push(...guards);
  if (input.mode === 'write' && input.worktree) {
    mounts.push({ kind: 'rw', path: input.worktree });
    const entry = worktreeGitEntry(input.worktree, input.gitRoot);
    if (entry) mounts.push({ kind: 'rw', path: entry });
  }
  mounts.push(...taskDirMounts(input, taskDirEntries));
  for (const state of agentStatePaths(input.agentId, input.env)) mounts.push({ kind: 'rw', path: state.path, optional: true });
  const shut = [...hidden, ...guards].map((m) => m.path);
  for (const p of input.readWrite) {
    if (shut.some((closed) => isUnder(path.resolve(p), closed) && path.resolve(p) !== closed)) mounts.push({ kind: 'rw', path: p, optional: true });
  }
  // Last, so that no folder mounted above shows one again; a socket named exactly in read_write stays reachable.
  for (const socket of socketsToCover(input.readWrite, [...shownUnderTmp, ...input.readWrite])) mounts.push({ kind: 'empty', path: socket, source: input.emptyFile });
  const tmpdir = input.env.TMPDIR;
  if (tmpdir && path.isAbsolute(tmpdir) && path.resolve(tmpdir) !== '/tmp' && isDirectory(tmpdir)) mounts.push({ kind: 'tmpfs', path: tmpdir });
  return mounts;
}

/** The repository's shared git dir and every .caesar/ (config, other tasks, other worktrees) read-only again. */
function repositoryGuards(input: SandboxInput): Mount[] {
  const guards = new Set<string>();
  for (const base of [input.gitRoot, input.root]) {
    if (!base) continue;
    guards.add(path.join(base, '.git'));
    guards.add(path.join(base, '.caesar'));
  }
  const common = input.gitRoot ? gitCommonDir(input.gitRoot) : undefined;
  if (common) guards.add(common);
  return [...guards].filter((p) => !namedWritable(p, input.readWrite)).map((p) => ({ kind: 'ro' as const, path: p, optional: true }));
}

/**
 * The agent's task directory: a fresh view dir bound over it, holding the task's files read-only, the live outbox
 * and questions (real, writable), and room for the report files, which the supervisor takes back after the run.
 */
function taskDirMounts(input: SandboxInput, entries: string[]): Mount[] {
  const mounts: Mount[] = [{ kind: 'rw', path: input.taskDir, source: input.taskView }];
  for (const name of entries) {
    if (NOT_SHOWN.has(name)) continue;
    mounts.push({ kind: 'ro', path: path.join(input.taskDir, name), optional: true });
  }
  for (const name of AGENT_TASK_LIVE) mounts.push({ kind: 'rw', path: path.join(input.taskDir, name), optional: true });
  // state.json as an empty read-only file: the agent can neither read the record nor write over its name.
  mounts.push({ kind: 'empty', path: path.join(input.taskDir, TASK_FILES.state), source: input.emptyFile });
  return mounts;
}

function hiddenMounts(input: SandboxInput): Mount[] {
  const home = input.env.HOME && path.isAbsolute(input.env.HOME) ? input.env.HOME : undefined;
  const candidates = [
    ...(home ? SECRET_PATHS.map((p) => path.join(home, p)) : []),
    ...sessionSockets(input.env, home),
    ...otherAgentsStatePaths(input.agentId, input.env).map((p) => p.path),
    ...input.hide,
  ];
  const mounts: Mount[] = [];
  for (const candidate of new Set(candidates.map(resolvedLink))) {
    if (namedWritable(candidate, input.readWrite)) continue;
    const kind = existingKind(candidate);
    if (kind === 'dir') mounts.push({ kind: 'tmpfs', path: candidate });
    else if (kind === 'file' || isSocket(candidate)) mounts.push({ kind: 'empty', path: candidate, source: input.emptyFile });
  }
  return mounts;
}

/**
 * What lets a process act as the user outside the sandbox, not by writing a file but by talking to a service: a
 * read-only mount does not stop connect(). The user's runtime folder (`$XDG_RUNTIME_DIR`, `/run/user/<uid>`) holds
 * the session bus (`systemd-run --user` runs anything), the gpg and ssh agents, Wayland, a rootless docker, Caesar's
 * warm supervisor; the X cookie opens the X server; the docker and podman sockets are root. Hidden: a tmpfs over the
 * folder, an empty file over a socket or the cookie.
 */
export function sessionSockets(env: NodeJS.ProcessEnv, home: string | undefined): string[] {
  const uid = process.getuid?.();
  return [
    ...(env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR) ? [env.XDG_RUNTIME_DIR] : []),
    ...(uid !== undefined ? [`/run/user/${uid}`] : []),
    // Caesar's warm supervisor, when its folder is not under the runtime folder or /tmp (both hidden already).
    ...(process.env.CAESAR_WARM_DIR && path.isAbsolute(process.env.CAESAR_WARM_DIR) ? [process.env.CAESAR_WARM_DIR] : []),
    ...(env.XAUTHORITY && path.isAbsolute(env.XAUTHORITY) ? [env.XAUTHORITY] : []),
    ...(home ? [path.join(home, '.Xauthority')] : []),
    '/run/docker.sock', '/var/run/docker.sock', '/run/podman/podman.sock',
  ];
}

/** Environment variables naming what sessionSockets hides (the agent would only be told where it cannot go). */
export const SESSION_ENV = ['DBUS_SESSION_BUS_ADDRESS', 'XAUTHORITY'];

function isSocket(p: string): boolean {
  try {
    return lstatSync(p).isSocket();
  } catch {
    return false;
  }
}

const PRIVATE_AREAS = ['/tmp', '/dev'];

/** Paths under /tmp the agent must still see (tests and some installs keep repositories, homes and tools there). */
function neededUnderTmp(input: SandboxInput): string[] {
  // The program, the files its argv names (a script), caesar's own bundle (the channel server the agent starts).
  const programs = [input.command, ...input.args, testSwitch('cliScript', input.env), testSwitch('demoAgentScript', input.env), process.execPath].filter((p): p is string => !!p && path.isAbsolute(p) && existingKind(p) !== undefined);
  const wanted = [input.root, input.gitRoot, input.workspace, input.cwd, input.env.HOME, ...programs.map((p) => path.dirname(p)), ...(input.env.PATH ?? '').split(path.delimiter)];
  const under = wanted.filter((p): p is string => !!p && path.isAbsolute(p) && PRIVATE_AREAS.some((area) => isUnder(path.resolve(p), area)));
  return [...new Set([...under.map((p) => path.resolve(p)), ...installsUnderTmp(input, under)])];
}

/**
 * Where the programs the agent runs are really installed, when that is under /tmp: a PATH folder there (or the
 * command) is often a folder of symlinks into an install elsewhere under /tmp (a tool cache made with mktemp -d), and
 * a link shown without its target is "No such file" inside. The install's top folder under /tmp is shown, read-only.
 */
function installsUnderTmp(input: SandboxInput, tmpPathDirs: string[]): string[] {
  const links = [input.command, ...tmpPathDirs.flatMap((dir) => symlinksIn(dir))];
  const tops = new Set<string>();
  for (const link of links) {
    if (!link || !path.isAbsolute(link)) continue;
    const real = resolvedLink(link);
    const top = topUnderPrivateArea(real);
    if (top && existingKind(top) === 'dir') tops.add(top);
  }
  return [...tops];
}

/** The symlinks a folder holds (a PATH folder of a few tools; at most 200 looked at). */
function symlinksIn(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .slice(0, 200)
      .filter((entry) => entry.isSymbolicLink())
      .map((entry) => path.join(dir, entry.name));
  } catch {
    return [];
  }
}

/** `/tmp/<first>` (or `/dev/shm/<first>`) for a path below it; undefined elsewhere. */
function topUnderPrivateArea(p: string): string | undefined {
  for (const area of ['/tmp', '/dev/shm']) {
    if (!isUnder(p, area) || p === area) continue;
    const first = path.relative(area, p).split(path.sep)[0];
    return first ? path.join(area, first) : undefined;
  }
  return undefined;
}

/** `<common dir>/worktrees/<name>` from the worktree's `.git` file, only when it lies where git puts it. */
export function worktreeGitEntry(worktree: string, gitRoot: string | undefined): string | undefined {
  try {
    const text = readFileSync(path.join(worktree, '.git'), 'utf8');
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
    if (!match) return undefined;
    const entry = realpathSync(path.resolve(worktree, match[1]!));
    const common = gitRoot ? gitCommonDir(gitRoot) : undefined;
    if (!common || !isUnder(entry, path.join(realpathSync(common), 'worktrees')) || entry === path.join(realpathSync(common), 'worktrees')) return undefined;
    return entry;
  } catch {
    return undefined;
  }
}

/** A hidden path that is a symlink is hidden at its target (a mount on a link would land there anyway). */
function resolvedLink(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function gitCommonDir(gitRoot: string): string | undefined {
  const dotGit = path.join(gitRoot, '.git');
  const kind = existingKind(dotGit);
  if (kind === 'dir') return dotGit;
  return undefined;
}

function existingKind(p: string): 'dir' | 'file' | undefined {
  try {
    const stat = lstatSync(p);
    if (stat.isDirectory()) return 'dir';
    if (stat.isFile()) return 'file';
    return undefined; // a symlink is not followed: bwrap would mount on its target
  } catch {
    return undefined;
  }
}

function isDirectory(p: string): boolean {
  return existingKind(p) === 'dir';
}

/** The user named `p` itself in `[sandbox] read_write`: they want it writable (a parent of it is not enough). */
function namedWritable(p: string, readWrite: readonly string[]): boolean {
  return readWrite.some((named) => path.resolve(named) === path.resolve(p));
}

function isUnder(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
