import { spawn } from 'node:child_process';
import { filesNamedBy, fingerprints, keyAndValue, lookupKey, parseOriginEntries, standardConfigFiles, type OriginEntry } from './config-watch';

/*
 * What every git process Caesar starts runs with (issue 22): nothing executes that the user did not set up. An agent
 * in a worktree can write the shared git dir (`config`, `hooks/`, `info/attributes`), and a cloned repository brings
 * its `.gitattributes`; git would run what they name in Caesar's own diff, apply, gc and worktree creation. Measured
 * on git 2.39.5 with marker files (test/reliability/git-planted.test.ts):
 *  - hooks (post-checkout, reference-transaction, post-index-change, pre-auto-gc, ...): `core.hooksPath=/dev/null`
 *    makes every hook lookup miss (`/dev/null/<hook>` is never a file);
 *  - `core.fsmonitor`: `false` (an empty value works too, `false` says what it means);
 *  - pagers: `--no-pager` and GIT_PAGER, editors: GIT_EDITOR/GIT_SEQUENCE_EDITOR (Caesar never edits interactively);
 *  - external diff and textconv: the porcelain diff commands get `--no-ext-diff --no-textconv` (plumbing runs
 *    neither; an empty `diff.external` or driver command would make git try to run "" and fail);
 *  - filter drivers (clean/smudge/process): the repository's config cannot be switched off for one section, so the
 *    filters it defines are read first (one `git config` process, its answer reused while no config file changes:
 *    repositoryOverrides) and overridden in git's command-line scope
 *    (GIT_CONFIG_KEY_<n>, see configEnv), which wins over every file: back to the user's own global/system
 *    definition (git-lfs keeps working), or empty with `required=false` (an empty command is "no filter";
 *    `required` would otherwise make git die). Files that `include.path`/`includeIf` pull in count as the including
 *    file's scope (`--includes`), so a planted include is the repository's too. Attributes only
 *    choose a driver by name (`.gitattributes`, `info/attributes`, core.attributesFile): with every driver the
 *    repository defined undone, what they choose is the user's own;
 *  - transports (a lazy fetch in a partial clone is the only one Caesar's commands could start): GIT_NO_LAZY_FETCH
 *    unless the repository is a partial clone whose fetch programs are all the user's (lazyFetchAllowed),
 *    `protocol.ext.allow` never, and submodules are not recursed into. (`uploadpack.packObjectsHook` is read from
 *    protected config only, never a repository's.)
 *  - merge drivers: overlap prediction runs `git merge-tree`, which would run the command a `merge.<name>.driver`
 *    names for a file whose attributes choose that driver. A driver the repository's config defines is replaced like
 *    a filter: by the user's own definition, or by `false` (runs nothing of the repository's; the file reads as a
 *    conflict, the cautious answer). Land (land-replay.ts) goes further and refuses a repository whose own config
 *    defines a merge driver, saying so, rather than landing a file as a conflict.
 *  - nested repositories (a submodule, or a repository an agent planted and committed as a gitlink): git starts a
 *    `git status` inside one to learn whether its work tree is dirty (`diff-index`, `diff-files`, `status`, `add`),
 *    and that process reads the nested repository's own config, whose filters no override here names (measured: a
 *    clean filter of `sub/.git/config` ran on `diff-index HEAD`). The diff and status commands get
 *    `--ignore-submodules=dirty` (a gitlink's commit still shows; the command line wins over `.gitmodules`, whose
 *    `ignore = none` beats `diff.ignoreSubmodules`); `add` has no such option, so Caesar's own adds leave the
 *    gitlinks of the index out of their pathspec (gitlinks.ts). `status.submoduleSummary` stays off.
 *  - bare repositories: `safe.bareRepository=explicit`, git never takes a folder it finds by discovery for a bare
 *    repository (a HEAD, objects/ and refs/ an agent laid out, whose config names core.fsmonitor).
 * Both `-c` values and GIT_CONFIG_KEY_<n> reach the git processes git itself starts (worktree remove's status, gc's
 * repack): git passes the first on in GIT_CONFIG_PARAMETERS, the second is inherited.
 */

/** Options that go before the subcommand of every git call. */
export const SAFE_GIT_OPTIONS: readonly string[] = [
  '--no-pager',
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'submodule.recurse=false',
  '-c', 'protocol.ext.allow=never',
  '-c', 'safe.bareRepository=explicit',
  '-c', 'diff.ignoreSubmodules=dirty',
  '-c', 'status.submoduleSummary=false',
];

/** Environment of every git call: no pager, no editor (`:` is the shell's no-op: git reads an empty message and stops). */
export const SAFE_GIT_ENV: Readonly<Record<string, string>> = {
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  GIT_EDITOR: ':',
  GIT_SEQUENCE_EDITOR: ':',
};

/** Porcelain commands that would run `diff.external`, a diff driver's command or textconv unless told not to. */
const PORCELAIN_DIFF = new Set(['diff', 'log', 'show', 'whatchanged', 'format-patch']);

/**
 * Subcommands that never convert content between the work tree and the object store, so no filter driver can run:
 * they skip the filter look-up (a process of its own). Anything not listed pays it: write-tree is not here, it was
 * measured running a clean filter (it hashes intent-to-add and stat-dirty entries of the index it is given).
 */
const FILTER_FREE = new Set([
  'rev-parse', 'rev-list', 'for-each-ref', 'show-ref', 'symbolic-ref', 'update-ref', 'check-ref-format', 'merge-base',
  'check-ignore', 'ls-tree', 'commit-tree', 'mktree', 'branch', 'config', 'diff-tree',
]);

/** Config scopes the user set up; `command` is `-c`/GIT_CONFIG_PARAMETERS from the environment Caesar was given. */
const USER_SCOPES = new Set(['system', 'global', 'command']);
const FILTER_COMMANDS = ['clean', 'smudge', 'process'] as const;

/** Index of the subcommand in argv (after global options such as `--git-dir=…`, `-c k=v`, `-C dir`). */
export function subcommandIndex(args: readonly string[]): number {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-c' || arg === '-C') i++;
    else if (!arg.startsWith('-')) return i;
  }
  return -1;
}

/** argv with `--no-ext-diff --no-textconv` right after a porcelain diff subcommand. */
export function withoutDiffPrograms(args: readonly string[]): string[] {
  const at = subcommandIndex(args);
  if (at < 0 || !PORCELAIN_DIFF.has(args[at] as string)) return [...args];
  return [...args.slice(0, at + 1), '--no-ext-diff', '--no-textconv', ...args.slice(at + 1)];
}

/** Commands that would start a git process inside each nested repository to see whether its work tree is dirty. */
const VISITS_SUBMODULES = new Set(['diff', 'diff-index', 'diff-files', 'status']);

/** argv with `--ignore-submodules=dirty` right after a subcommand that would otherwise look inside nested repositories. */
export function withoutSubmoduleVisits(args: readonly string[]): string[] {
  const at = subcommandIndex(args);
  if (at < 0 || !VISITS_SUBMODULES.has(args[at] as string)) return [...args];
  return [...args.slice(0, at + 1), '--ignore-submodules=dirty', ...args.slice(at + 1)];
}

/** Whether the subcommand can run a filter driver (and so needs the look-up). */
export function mayRunFilters(args: readonly string[]): boolean {
  const at = subcommandIndex(args);
  if (at < 0) return false;
  const command = args[at] as string;
  if (command === 'cat-file') return args.some((a) => a === '--filters' || a === '--textconv');
  // Listing the untracked or indexed names reads no content; -m compares it.
  if (command === 'ls-files') return args.some((a) => a === '-m' || a === '--modified');
  if (command === 'worktree') return !['list', 'prune', 'lock', 'unlock'].includes(args[at + 1] ?? '');
  return !FILTER_FREE.has(command);
}

/** A config key and its value, as git's `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` take them. */
export type ConfigPair = [key: string, value: string];

/**
 * The environment that adds `pairs` to git's command-line scope (which wins over every config file), after the ones
 * the environment already holds. Not `-c key=value`: git splits that at the first `=`, and a filter name may hold one
 * (`[filter "a=b"]`, chosen by `filter=a=b`): measured, `-c filter.a=b.clean=` left the planted filter running.
 */
export function configEnv(pairs: readonly ConfigPair[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!pairs.length) return env;
  const already = Number.parseInt(env.GIT_CONFIG_COUNT ?? '', 10);
  const first = Number.isSafeInteger(already) && already > 0 ? already : 0;
  const added: NodeJS.ProcessEnv = { GIT_CONFIG_COUNT: String(first + pairs.length) };
  pairs.forEach(([key, value], i) => {
    added[`GIT_CONFIG_KEY_${first + i}`] = key;
    added[`GIT_CONFIG_VALUE_${first + i}`] = value;
  });
  return { ...env, ...added };
}

interface ConfigEntry {
  scope: string;
  /** As git prints it: section and variable lower-cased, the subsection as written. */
  key: string;
  value: string;
}

interface FilterEntry extends ConfigEntry {
  name: string;
}

/** Parses `git config --show-scope -z --get-regexp` output: `scope\0key\nvalue\0` per entry. */
export function parseConfigEntries(output: string): ConfigEntry[] {
  const fields = output.split('\0');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) entries.push({ scope: fields[i] as string, ...keyAndValue(fields[i + 1] as string) });
  return entries;
}

/** The filter entries in `scope\0key\nvalue\0` output, with the filter's name. */
export function parseFilterEntries(output: string): FilterEntry[] {
  return filterEntriesOf(parseConfigEntries(output));
}

/** The filter entries among them, with the filter's name (a subsection, which may itself hold dots). */
function filterEntriesOf(all: readonly ConfigEntry[]): FilterEntry[] {
  const entries: FilterEntry[] = [];
  for (const entry of all) {
    const match = /^filter\.(.+)\.([^.]+)$/.exec(entry.key);
    if (match) entries.push({ ...entry, name: match[1] as string, key: match[2] as string });
  }
  return entries;
}

/**
 * Keys naming a program a fetch runs on this machine: `remote.<name>.uploadpack` (file:// and local paths),
 * core.sshCommand, core.gitProxy (git://), core.askPass and credential helpers (http). The only fetch Caesar's git
 * could start is a lazy one, in a partial clone, for an object it lacks (measured: a planted
 * `remote.origin.uploadpack` ran on `git cat-file blob` of a missing blob). `ext::` is refused outright.
 */
const TRANSPORT_PROGRAM = /^(remote\..+\.(uploadpack|receivepack)|core\.(sshcommand|gitproxy|askpass)|credential\.(.+\.)?helper)$/;

/**
 * Whether a lazy fetch may run: the repository is a partial clone (the user's, as far as git says), and no program
 * a fetch would run comes from the repository's own config. Otherwise GIT_NO_LAZY_FETCH (git 2.39.4 and later):
 * a missing object is an error, never a fetch.
 */
export function lazyFetchAllowed(entries: readonly ConfigEntry[]): boolean {
  // A clone with --filter marks its remote `promisor = true`; older ones name it in extensions.partialClone.
  const partialClone = entries.some((e) => e.key === 'extensions.partialclone' || /^remote\..+\.promisor$/.test(e.key));
  return partialClone && !entries.some((e) => TRANSPORT_PROGRAM.test(e.key) && !USER_SCOPES.has(e.scope));
}

/**
 * `-c` pairs that undo every filter definition the repository's own config (its `config`, `config.worktree`, and
 * what they include) made: each command it set gets the user's global/system value back, or none. Only the keys it
 * set are touched: git ignores clean/smudge whenever `process` is set, even to "" (measured), so blanking a `process`
 * the repository planted over a user's clean/smudge filter leaves that filter off, and `required=false` lets the
 * content through unfiltered rather than fail the command.
 */
export function filterOverrides(entries: readonly FilterEntry[]): ConfigPair[] {
  const plantedKeys = new Map<string, Set<string>>();
  for (const e of entries) if (!USER_SCOPES.has(e.scope)) plantedKeys.set(e.name, (plantedKeys.get(e.name) ?? new Set()).add(e.key));
  const overrides: ConfigPair[] = [];
  for (const [name, keys] of plantedKeys) {
    const usersValue = (key: string) => entries.filter((e) => e.name === name && e.key === key && USER_SCOPES.has(e.scope)).at(-1)?.value;
    for (const key of FILTER_COMMANDS) if (keys.has(key)) overrides.push([`filter.${name}.${key}`, usersValue(key) ?? '']);
    const processBlanked = keys.has('process') && usersValue('process') === undefined;
    overrides.push([`filter.${name}.required`, processBlanked ? 'false' : (usersValue('required') ?? 'false')]);
  }
  return overrides;
}

/** Overrides for every merge driver command the repository's own config set: the user's own value, or `false`. */
export function mergeDriverOverrides(entries: readonly ConfigEntry[]): ConfigPair[] {
  const planted = new Set(entries.filter((e) => /^merge\..+\.driver$/.test(e.key) && !USER_SCOPES.has(e.scope)).map((e) => e.key));
  return [...planted].map((key) => [key, entries.filter((e) => e.key === key && USER_SCOPES.has(e.scope)).at(-1)?.value ?? 'false']);
}

/** What one git call needs beyond the fixed options: filter overrides, and whether a lazy fetch may run. */
export interface RepositoryOverrides {
  pairs: ConfigPair[];
  lazyFetch: boolean;
}

/** The config keys whose entries decide the overrides (the look-up lists every entry: includes are named too). */
const LOOKED_UP = /^(filter\..+|merge\..+\.driver|extensions\.partialclone|remote\..+\.(promisor|uploadpack|receivepack)|core\.(sshcommand|gitproxy|askpass)|credential\..+)$/;

const NO_OVERRIDES: RepositoryOverrides = { pairs: [], lazyFetch: false };

/**
 * Answers of earlier look-ups, by lookupKey, with the fingerprint of every config file they depend on
 * (config-watch.ts). `complete`: every one of those files was fingerprinted before the look-up too and none changed
 * while it ran, so the answer is the one for exactly these contents. A first look-up that found files it could not
 * know beforehand (an include target, a system file elsewhere than /etc/gitconfig) is not complete: the next call
 * looks up again, with those files fingerprinted before, and that answer is the one reused.
 */
interface CachedLookup {
  files: string[];
  prints: string[];
  answer: RepositoryOverrides;
  complete: boolean;
}
const lookups = new Map<string, CachedLookup>();
/** A handful per task (the worktree, the checkout, with or without a ceiling); a long-lived process starts over. */
const MAX_CACHED = 64;

/**
 * The overrides for one git call: the call's own global options (`--git-dir`, `--work-tree`) name the repository
 * whose config is read. Commands that convert no content skip the look-up: no filter, and no lazy fetch either
 * (without one, lazy fetching stays off). A look-up git cannot answer (a missing directory, an unreadable config)
 * adds no filter override and leaves lazy fetching off: the call itself then meets the same error.
 *
 * The look-up's answer is reused, without a process, for a call with the same cwd, global options and environment
 * while every config file it depends on has the same identity and content (config-watch.ts says which files and why
 * that suffices): a filter planted in any of them between two calls makes the second look up again.
 */
export async function repositoryOverrides(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<RepositoryOverrides> {
  if (!mayRunFilters(args)) return NO_OVERRIDES;
  const globalOptions = args.slice(0, subcommandIndex(args));
  // GIT_CONFIG makes `git config` (only it) read that one file instead: the look-up would miss the repository's.
  const lookupEnv = { ...env };
  delete lookupEnv.GIT_CONFIG;
  const key = lookupKey(globalOptions, cwd, lookupEnv);
  const cached = key === undefined ? undefined : lookups.get(key);
  if (cached?.complete && samePrints(fingerprints(cached.files), cached.prints)) return cached.answer;
  const standard = key === undefined ? undefined : standardConfigFiles(globalOptions, cwd, lookupEnv);
  const before = standard && [...new Set([...standard, ...(cached?.files ?? [])])];
  const beforePrints = before && fingerprints(before);
  const output = await lookUp(globalOptions, cwd, lookupEnv);
  if (output === undefined) return NO_OVERRIDES;
  const entries = parseOriginEntries(output);
  const answer = overridesOf(entries.filter((e) => LOOKED_UP.test(e.key)));
  if (key !== undefined && standard && before && beforePrints) remember(key, answer, entries, { cwd, env: lookupEnv, standard }, { files: before, prints: beforePrints });
  else if (key !== undefined) lookups.delete(key);
  return answer;
}

/** One `git config` process: every entry, with its scope and the file it came from, includes followed. */
function lookUp(globalOptions: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const lookup = [...SAFE_GIT_OPTIONS, ...globalOptions, 'config', '--show-scope', '--show-origin', '--includes', '-z', '--list'];
  return new Promise<string | undefined>((resolve) => {
    const child = spawn('git', lookup, { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? Buffer.concat(out).toString('utf8') : undefined));
  });
}

function overridesOf(entries: readonly ConfigEntry[]): RepositoryOverrides {
  return { pairs: [...filterOverrides(filterEntriesOf(entries)), ...mergeDriverOverrides(entries)], lazyFetch: lazyFetchAllowed(entries) };
}

/** Keeps the answer with the fingerprints of every file it depends on; drops any earlier one when that fails. */
function remember(
  key: string,
  answer: RepositoryOverrides,
  entries: readonly OriginEntry[],
  call: { cwd: string; env: NodeJS.ProcessEnv; standard: readonly string[] },
  before: { files: string[]; prints: string[] },
): void {
  lookups.delete(key);
  const named = filesNamedBy(entries, call.cwd, call.env, call.standard);
  if (!named) return;
  const files = [...before.files, ...named.filter((f) => !before.files.includes(f))];
  const prints = fingerprints(files);
  if (!prints) return;
  const complete = files.length === before.files.length && samePrints(prints, before.prints);
  if (lookups.size >= MAX_CACHED) lookups.clear();
  lookups.set(key, { files, prints, answer, complete });
}

function samePrints(now: readonly string[] | undefined, then: readonly string[]): boolean {
  return now !== undefined && now.length === then.length && now.every((p, i) => p === then[i]);
}

/** The filter overrides alone (repositoryOverrides' pairs). */
export async function filterOverridesFor(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<ConfigPair[]> {
  return (await repositoryOverrides(args, cwd, env)).pairs;
}
