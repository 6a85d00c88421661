import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import {
  ConfigEditError,
  ConfigError,
  DEFAULT_POLICY,
  DEFAULT_ROLE_PROMPTS,
  DEFAULT_ROLES,
  ISOLATIONS,
  MODES,
  NETWORK_REQUESTS,
  POLICY_TOML_KEY,
  POLICY_TOML_KEYS,
  allowlistWarning,
  declaringLayers,
  formatConfigDuration,
  homeDir,
  layerFiles,
  loadConfig,
  parseDuration,
  parsePolicyValue,
  readRolePrompt,
  removeRole,
  setModel,
  setPolicyValue,
  targetLayer,
  unsetModel,
  upsertRole,
  writeLayer,
  writeFileAtomic,
  type LayerName,
  type LoadedConfig,
  type Origin,
  type PolicyKey,
  type RoleConfig,
  type WriteResult,
} from '../../config';
import { agentCatalogue, agentStatuses, pickForRole, type AgentCatalogue } from '../../engine/tasks';
import { gitToplevel } from '../../engine/git';
import { DelegationRefusedError } from '../../engine/resolve';
import { detectWorkshop } from '../../engine/workshop';
import { termSafeBlock } from '../format';
import { UsageError, printJson, type CliIo } from '../io';
import { resolveRoot } from '../root';

/**
 * The configuration commands: init, doctor, agents, policy, role. They are thin: every rule lives in src/config (and
 * src/engine/resolve.ts for what delegation would pick), shared with the MCP server and the extension.
 */

interface CommonOptions {
  root?: string;
  json?: boolean;
  global?: boolean;
  local?: boolean;
}

interface Context {
  io: CliIo;
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  json: boolean;
}

function contextOf(io: CliIo, opts: CommonOptions): Context {
  const root = resolveRoot(io.cwd, opts.root);
  return { io: opts.json ? io : inertIo(io), root, home: homeDir(io.env), env: io.env, json: Boolean(opts.json) };
}

/**
 * The configuration commands print what a repository's config chose (agent names, role prompts, paths) and use no
 * styling of their own: everything they write is made terminal-safe at this boundary (termSafeBlock keeps lines).
 * `--json` output is left as JSON.stringify wrote it.
 */
function inertIo(io: CliIo): CliIo {
  return Object.assign(Object.create(io) as CliIo, { out: (text: string) => io.out(termSafeBlock(text)), err: (text: string) => io.err(termSafeBlock(text)) });
}

/** `--global` or `--local`, never both; neither means the project layer. */
function scopeOf(opts: CommonOptions): LayerName {
  if (opts.global && opts.local) throw new UsageError('--global and --local are mutually exclusive: pick the one layer to write.');
  return opts.global ? 'global' : opts.local ? 'local' : 'project';
}

function load(ctx: Context): Promise<LoadedConfig> {
  return loadConfig({ root: ctx.root, home: ctx.home, env: ctx.env });
}

function catalogueOf(loaded: LoadedConfig, ctx: Context): AgentCatalogue {
  return agentCatalogue(loaded, { env: ctx.env, root: ctx.root });
}

/** Config and policy problems are the caller's to fix: exit 2, one clear message. */
function run<A extends unknown[]>(fn: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (err instanceof ConfigError || err instanceof ConfigEditError || err instanceof DelegationRefusedError) throw new UsageError(err.message);
      throw err;
    }
  };
}

function withCommon(command: Command, writes: boolean): Command {
  command.option('--root <dir>', 'the caesar root (default: first ancestor with .caesar/ or .git)').option('--json', 'print JSON only');
  if (writes) command.option('--global', 'write the global layer (~/.config/caesar/config.toml)').option('--local', 'write the local layer (.caesar/config.local.toml, not committed)');
  return command;
}

function reportWrite(ctx: Context, result: WriteResult, what: string, notices: string[] = []): void {
  if (!result.preserved) notices.push(`${result.file} was rewritten whole (it uses a TOML form caesar does not edit in place): its comments are gone.`);
  if (ctx.json) {
    printJson(ctx.io, { file: result.file, changed: what, preserved_comments: result.preserved, notices });
    return;
  }
  ctx.io.out(`${what} (${result.file})`);
  for (const notice of notices) ctx.io.err(`note: ${notice}`);
}

export function registerConfig(program: Command, io: CliIo): void {
  registerInit(program, io);
  registerDoctor(program, io);
  registerAgents(program, io);
  registerPolicy(program, io);
  registerRoles(program, io);
}

// ---------------------------------------------------------------------------------------------------------- init

const GITIGNORE_LINES = ['.caesar/config.local.toml', '.caesar/tasks/', '.caesar/wt/', '.caesar/state/'];

const PROJECT_HEADER = `# Caesar project configuration, shared with everyone working on this repository.
# Personal overrides go to .caesar/config.local.toml (not committed), your defaults to ~/.config/caesar/config.toml.
# See the effective values with: caesar policy show / caesar role list / caesar doctor
`;

const GLOBAL_HEADER = `# Caesar global configuration: your defaults for every project.
# Projects override it in .caesar/config.toml and .caesar/config.local.toml.
`;

function registerInit(program: Command, io: CliIo): void {
  withCommon(program.command('init'), false)
    .description('Set up caesar here: project config (with a detected [worktree]), role prompts, .gitignore lines')
    .option('--global', 'write the full default configuration into ~/.config/caesar/config.toml instead')
    .option('--force', 'rewrite the config and the role prompts even if they exist')
    .action(
      run(async (opts: CommonOptions & { force?: boolean }) => {
        const ctx = contextOf(io, opts);
        if (opts.global) await initGlobal(ctx, Boolean(opts.force));
        else await initProject(ctx, Boolean(opts.force));
      }),
    );
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

function defaultConfigData(): Record<string, unknown> {
  const policy: Record<string, unknown> = {};
  for (const key of Object.keys(DEFAULT_POLICY) as PolicyKey[]) {
    const value = DEFAULT_POLICY[key];
    policy[POLICY_TOML_KEY[key]] = key === 'default_timeout_ms' ? formatConfigDuration(value as number) : value;
  }
  return { policy, worktree: { copy: [], link: [], setup: [] }, role: DEFAULT_ROLES.map((r) => roleData(r)) };
}

function roleData(role: RoleConfig): Record<string, unknown> {
  const { timeout_ms, ...rest } = role;
  return timeout_ms === undefined ? { ...rest } : { ...rest, timeout: formatConfigDuration(timeout_ms) };
}

async function initGlobal(ctx: Context, force: boolean): Promise<void> {
  const file = layerFiles(undefined, ctx.home).global;
  const present = await exists(file);
  if (present && !force) {
    if (ctx.json) printJson(ctx.io, { file, written: false, reason: 'exists' });
    else ctx.io.out(`${file} already exists; nothing written (use --force to replace it with the defaults).`);
    return;
  }
  await writeLayer(file, defaultConfigData(), `${GLOBAL_HEADER}\n`);
  if (ctx.json) printJson(ctx.io, { file, written: true });
  else ctx.io.out(`Wrote the default configuration to ${file}`);
}

async function initProject(ctx: Context, force: boolean): Promise<void> {
  const files = layerFiles(ctx.root, ctx.home);
  const configFile = files.project!;
  const written: string[] = [];
  const warnings: string[] = [];
  const refreshed = (await exists(configFile)) && !force;

  const gitRoot = await gitToplevel(ctx.root);
  let worktree: { copy: string[]; setup: string[]; marker?: string } | undefined;
  if (!refreshed) {
    const suggestion = gitRoot ? await detectWorkshop(ctx.root) : undefined;
    worktree = suggestion ? { copy: suggestion.copy, setup: suggestion.setup, ...(suggestion.marker ? { marker: suggestion.marker } : {}) } : undefined;
    const data = worktree ? { worktree: { copy: worktree.copy, setup: worktree.setup } } : {};
    await writeLayer(configFile, data, worktree ? `${PROJECT_HEADER}\n` : PROJECT_HEADER);
    written.push(configFile);
  }

  for (const role of DEFAULT_ROLES) {
    const file = path.join(ctx.root, '.caesar', role.system_prompt_file!);
    if (!force && (await exists(file))) continue;
    await writeFileAtomic(file, DEFAULT_ROLE_PROMPTS[role.name]!);
    written.push(file);
  }

  let gitignoreAdded: string[] = [];
  if (gitRoot) gitignoreAdded = await addGitignoreLines(path.join(ctx.root, '.gitignore'));
  else warnings.push(`${ctx.root} is not inside a git repository: worktree isolation is unavailable and changes cannot be verified by git. Run git init and commit once.`);

  if (ctx.json) {
    printJson(ctx.io, { root: ctx.root, refreshed, written, gitignore_added: gitignoreAdded, worktree: worktree ?? null, warnings });
    return;
  }
  ctx.io.out(refreshed ? `caesar is already set up in ${ctx.root}; refreshed what was missing (use --force to rewrite the config and prompts).` : `caesar is set up in ${ctx.root}.`);
  for (const file of written) ctx.io.out(`  wrote ${path.relative(ctx.root, file) || file}`);
  if (gitignoreAdded.length) ctx.io.out(`  .gitignore: added ${gitignoreAdded.join(', ')}`);
  if (worktree) ctx.io.out(`  [worktree] detected${worktree.marker ? ` from ${worktree.marker}` : ''}: copy ${JSON.stringify(worktree.copy)}, setup ${JSON.stringify(worktree.setup)}`);
  for (const warning of warnings) ctx.io.err(`warning: ${warning}`);
}

/** Appends the missing lines, keeping the file's content and line endings; written atomically. */
async function addGitignoreLines(file: string): Promise<string[]> {
  let text = '';
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const present = new Set(text.split(/\r?\n/).map((l) => l.trim()));
  const missing = GITIGNORE_LINES.filter((line) => !present.has(line) && !present.has(`/${line}`));
  if (!missing.length) return [];
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const prefix = text === '' || text.endsWith('\n') ? text : `${text}${eol}`;
  await writeFileAtomic(file, `${prefix}${text === '' ? '' : eol}# caesar${eol}${missing.join(eol)}${eol}`);
  return missing;
}

// -------------------------------------------------------------------------------------------------------- doctor

function registerDoctor(program: Command, io: CliIo): void {
  withCommon(program.command('doctor'), false)
    .description('Check each agent: installed or not, version, capabilities, allowed by the policy or why not')
    .action(
      run(async (opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const agents = await agentStatuses(loaded, catalogueOf(loaded, ctx), { withVersion: true });
        const missing = agents.filter((a) => !a.installed).map((a) => a.id);
        const denied = agents.filter((a) => a.refusal).map((a) => ({ id: a.id, ...a.refusal! }));
        const layers = loaded.layers.map((l) => ({ scope: l.scope, file: l.file }));
        if (ctx.json) {
          printJson(ctx.io, { root: ctx.root, layers, agents, missing, denied });
          return;
        }
        ctx.io.out(`caesar root: ${ctx.root}`);
        ctx.io.out(`config files: ${layers.length ? layers.map((l) => `${l.file} (${l.scope})`).join(', ') : 'none (built-in defaults)'}`);
        for (const agent of agents) {
          const state = agent.installed ? `found${agent.version ? `, ${agent.version}` : ''}` : 'not found';
          const policy = agent.refusal ? `refused: ${agent.refusal.reason}` : 'allowed';
          ctx.io.out(`${agent.installed ? '✓' : '✗'} ${agent.id.padEnd(12)} ${agent.display_name} — ${state} — ${policy}`);
          ctx.io.out(`    ${capabilitiesInWords(agent.capabilities)}`);
        }
        if (missing.length) {
          ctx.io.out(`\nTo install: ${missing.join(', ')} (each is looked up on PATH).`);
          for (const agent of agents) if (agent.install_hint) ctx.io.out(`  ${agent.id.padEnd(12)} ${agent.install_hint}`);
        }
        if (denied.length) {
          ctx.io.out('\nRefused by the policy:');
          for (const d of denied) ctx.io.out(`  ${d.id}: ${d.reason}\n    remedy: ${d.remedy}`);
        }
      }),
    );
}

/** What each capability means for the user, in words (`doctor --json` keeps the flags). */
const CAPABILITY_WORDS: Array<{ key: string; has: string; lacks: string }> = [
  { key: 'nativeReadOnly', has: 'can confine itself to reading', lacks: 'has no read-only mode (read-only tasks run in a worktree)' },
  { key: 'schemaTier', has: 'returns its report as structured output', lacks: 'writes its report to a file' },
  { key: 'model', has: 'takes a model name', lacks: 'cannot be given a model' },
  { key: 'reportsUsage', has: 'reports tokens and cost', lacks: 'does not report tokens or cost' },
  { key: 'channel', has: 'can report back over the MCP channel', lacks: '' },
];

const NETWORK_WORDS: Record<string, string> = {
  open: 'network always on (caesar cannot cut it)',
  controllable: 'network switched on or off per task',
  'write-only': 'network only in write tasks',
  unknown: 'network unknown (its [[agent]] entry declares no network_args)',
};

function capabilitiesInWords(caps: unknown): string {
  if (!caps || typeof caps !== 'object') return 'capabilities unknown';
  const c = caps as Record<string, unknown>;
  const words = CAPABILITY_WORDS.map((w) => (c[w.key] === true ? w.has : w.lacks)).filter(Boolean);
  return [...words, NETWORK_WORDS[String(c.network)] ?? `network ${String(c.network)}`].join('; ');
}

// -------------------------------------------------------------------------------------------------------- agents

function registerAgents(program: Command, io: CliIo): void {
  const agents = program.command('agents').description('List agents and change which are enabled and which model they use');

  withCommon(agents.command('list'), false)
    .description('Each agent with its install and policy status and its configured model')
    .action(
      run(async (opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const statuses = await agentStatuses(loaded, catalogueOf(loaded, ctx));
        if (ctx.json) {
          printJson(ctx.io, { agents: statuses });
          return;
        }
        for (const a of statuses) {
          const model = a.model ? ` model ${a.model.value} (${a.model.origin})` : '';
          ctx.io.out(`${a.id.padEnd(12)} ${a.installed ? 'installed' : 'not found'}  ${a.allowed ? 'allowed' : `refused (${a.refusal!.rule})`}${model}`);
        }
      }),
    );

  withCommon(agents.command('enable'), true)
    .argument('<id>', 'agent id')
    .description('Remove the agent from the denied list of a layer')
    .action(run(async (id: string, opts: CommonOptions) => editList(io, opts, 'denied', id, 'remove')));

  withCommon(agents.command('disable'), true)
    .argument('<id>', 'agent id')
    .description('Add the agent to the denied list of a layer')
    .action(run(async (id: string, opts: CommonOptions) => editList(io, opts, 'denied', id, 'add')));

  withCommon(agents.command('set-model'), true)
    .argument('<id>', 'agent id')
    .argument('<model>', 'model name, passed to the agent as is')
    .description('Set the model an agent uses by default ([models] of a layer)')
    .action(
      run(async (id: string, model: string, opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const catalogue = catalogueOf(loaded, ctx);
        assertKnownAgent(catalogue, id);
        if (catalogue.capabilities(id)?.model === false) throw new UsageError(`Agent "${id}" cannot be given a model.`);
        const target = targetLayer(loaded.files, scopeOf(opts));
        const result = await setModel(target.file, id, model);
        const notices = await shadowNotices(ctx, target.scope, (l) => l.provenance.models[id], `[models] ${id}`);
        reportWrite(ctx, result, `${id} now uses model ${model} in the ${target.scope} layer`, notices);
      }),
    );

  withCommon(agents.command('unset-model'), true)
    .argument('<id>', 'agent id')
    .description('Remove the default model of an agent from a layer')
    .action(
      run(async (id: string, opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const scope = scopeOf(opts);
        const declaring = declaringLayers(loaded, (data) => data.models?.[id] !== undefined);
        if (!declaring.includes(scope)) {
          throw new UsageError(
            declaring.length
              ? `The ${scope} layer does not set a model for "${id}"; ${declaring.join(' and ')} does: caesar agents unset-model ${id}${flagOf(declaring[declaring.length - 1]!)}`
              : `No layer sets a model for "${id}".`,
          );
        }
        const target = targetLayer(loaded.files, scope);
        const result = await unsetModel(target.file, id);
        reportWrite(ctx, result, `Removed the model of ${id} from the ${scope} layer`);
      }),
    );
}

function flagOf(scope: Origin): string {
  return scope === 'global' ? ' --global' : scope === 'local' ? ' --local' : '';
}

function assertKnownAgent(catalogue: AgentCatalogue, id: string): void {
  if (!catalogue.capabilities(id)) throw new UsageError(`Unknown agent "${id}". Known agents: ${catalogue.ids().join(', ')}.`);
}

/** After a write: if a more specific layer still decides the value, the write has no effect yet. Say so. */
async function shadowNotices(
  ctx: Context,
  written: LayerName,
  originOf: (loaded: LoadedConfig) => Origin | undefined,
  what: string,
  commandFor?: (layerFlag: string) => string,
): Promise<string[]> {
  const after = await load(ctx);
  const origin = originOf(after);
  if (origin && origin !== 'default' && origin !== written) {
    const there = commandFor ? ` (or change it there: ${commandFor(flagOf(origin))})` : '';
    return [`${what} is also set in the ${origin} layer, ${after.files[origin] ?? origin}, which takes precedence: this change has no effect until that one is removed${there}.`];
  }
  return [];
}

/** `allowed`/`denied` edits write the EFFECTIVE list ± the id into the target layer (reference §4.1.8). */
async function editList(io: CliIo, opts: CommonOptions, list: 'allowed' | 'denied', id: string, op: 'add' | 'remove'): Promise<void> {
  const ctx = contextOf(io, opts);
  const scope = scopeOf(opts);
  const loaded = await load(ctx);
  const catalogue = catalogueOf(loaded, ctx);
  const target = targetLayer(loaded.files, scope);
  const before = loaded.config.policy[list];
  const notices: string[] = [];
  // Unknown ids are accepted (an agent may be declared later, or elsewhere), but a typo deserves a word.
  if (op === 'add' && !catalogue.capabilities(id)) notices.push(`"${id}" is not a known agent (known: ${catalogue.ids().join(', ')}).`);
  if (op === 'add' && before.includes(id)) notices.push(`"${id}" was already in the ${list} list.`);
  if (op === 'remove' && !before.includes(id)) notices.push(`"${id}" was not in the ${list} list.`);
  const next = op === 'add' ? [...before.filter((x) => x !== id), id] : before.filter((x) => x !== id);
  const declared = loaded.layers.find((l) => l.scope === scope)?.data.policy?.[list] !== undefined;
  if (!declared) notices.push(`The ${scope} layer did not declare [policy] ${list}; it now holds the whole effective list (${JSON.stringify(next)}), which replaces the inherited one.`);
  if (list === 'allowed' && op === 'add') {
    const warning = allowlistWarning(before, id);
    if (warning) notices.push(warning);
    if (loaded.config.policy.denied.includes(id)) notices.push(`"${id}" is also denied, and denied wins: caesar agents enable ${id}${flagOf(loaded.provenance.policy.denied)}`);
  }
  const result = await setPolicyValue(target.file, list, next);
  notices.push(...(await shadowNotices(ctx, scope, (l) => l.provenance.policy[list], `[policy] ${list}`)));
  const verb = list === 'denied' ? (op === 'add' ? `Disabled ${id}` : `Enabled ${id}`) : op === 'add' ? `Allowed ${id}` : `Removed ${id} from the allowed list`;
  reportWrite(ctx, result, `${verb} in the ${scope} layer`, notices);
}

// -------------------------------------------------------------------------------------------------------- policy

function registerPolicy(program: Command, io: CliIo): void {
  const policy = program.command('policy').description('Show and edit the delegation policy');

  withCommon(policy.command('show'), false)
    .description('Each policy field with its value and the layer it comes from')
    .action(
      run(async (opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const fields = (Object.keys(POLICY_TOML_KEY) as PolicyKey[]).map((key) => {
          const value = loaded.config.policy[key];
          return {
            key: POLICY_TOML_KEY[key],
            value: key === 'default_timeout_ms' ? formatConfigDuration(value as number) : value,
            ...(key === 'default_timeout_ms' ? { ms: value } : {}),
            origin: loaded.provenance.policy[key],
          };
        });
        if (ctx.json) {
          printJson(ctx.io, { policy: fields, files: loaded.files });
          return;
        }
        for (const f of fields) ctx.io.out(`${f.key.padEnd(20)} ${JSON.stringify(f.value).padEnd(24)} (${f.origin})`);
      }),
    );

  withCommon(policy.command('allow'), true)
    .argument('<id>', 'agent id')
    .description('Add an agent to the allowed list (a non-empty list refuses every other agent)')
    .action(run(async (id: string, opts: CommonOptions) => editList(io, opts, 'allowed', id, 'add')));

  withCommon(policy.command('deny'), true)
    .argument('<id>', 'agent id')
    .description('Add an agent to the denied list')
    .action(run(async (id: string, opts: CommonOptions) => editList(io, opts, 'denied', id, 'add')));

  withCommon(policy.command('set'), true)
    .argument('<key>', `the policy key: ${POLICY_TOML_KEYS.join(', ')}`)
    .argument('<value>', 'true/false, a number, a word (e.g. worktree), a duration (e.g. 10m), or agent ids separated by commas')
    .description('Set one [policy] value in a layer, checked as loading checks it (comments in the file are kept)')
    .action(run(async (key: string, value: string, opts: CommonOptions) => setPolicy(io, opts, key, value)));
}

async function setPolicy(io: CliIo, opts: CommonOptions, key: string, text: string): Promise<void> {
  const ctx = contextOf(io, opts);
  const scope = scopeOf(opts);
  const value = parsePolicyValue(key, text);
  const loaded = await load(ctx);
  const target = targetLayer(loaded.files, scope);
  const result = await setPolicyValue(target.file, key, value);
  const policyKey = (Object.keys(POLICY_TOML_KEY) as PolicyKey[]).find((k) => POLICY_TOML_KEY[k] === key)!;
  const notices = await shadowNotices(ctx, scope, (l) => l.provenance.policy[policyKey], `[policy] ${key}`, (flag) => `caesar policy set ${key} ${text}${flag}`);
  reportWrite(ctx, result, `${key} = ${JSON.stringify(value)} in the ${scope} layer`, notices);
}

// ---------------------------------------------------------------------------------------------------------- role

function registerRoles(program: Command, io: CliIo): void {
  const role = program.command('role').description('Roles: a named agent fallback list with a mode and defaults');

  withCommon(role.command('list'), false)
    .description('Each role with the agent it would pick today')
    .action(
      run(async (opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const catalogue = catalogueOf(loaded, ctx);
        const roles = await Promise.all(
          loaded.config.roles.map(async (r) => {
            const pick = await pickForRole(loaded, catalogue, r);
            return { ...roleView(r), origin: loaded.provenance.roles[r.name] ?? 'default', picks: pick.agent ?? null, skipped: pick.skipped };
          }),
        );
        if (ctx.json) {
          printJson(ctx.io, { roles });
          return;
        }
        for (const r of roles) {
          ctx.io.out(`${r.name.padEnd(14)} ${r.mode.padEnd(9)} [${r.agents.join(', ')}] → ${r.picks ?? 'no agent available'} (${r.origin})`);
        }
      }),
    );

  withCommon(role.command('show'), false)
    .argument('<name>', 'role name')
    .description('A role in full, with its system prompt and where it is declared')
    .action(
      run(async (name: string, opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const found = findRole(loaded, name);
        const prompt = await readRolePrompt(ctx.root, found);
        const pick = await pickForRole(loaded, catalogueOf(loaded, ctx), found);
        const view = { ...roleView(found), origin: loaded.provenance.roles[name] ?? 'default', picks: pick.agent ?? null, skipped: pick.skipped, system_prompt: prompt };
        if (ctx.json) {
          printJson(ctx.io, view);
          return;
        }
        ctx.io.out(`role ${view.name} (${view.origin})`);
        for (const [key, value] of Object.entries(view)) {
          if (key === 'name' || key === 'origin' || key === 'system_prompt' || key === 'skipped') continue;
          ctx.io.out(`  ${key.padEnd(18)} ${JSON.stringify(value)}`);
        }
        for (const s of view.skipped) ctx.io.out(`  skipped ${s.agent}: ${s.reason}`);
        ctx.io.out(prompt.trim() ? `\n${prompt.trimEnd()}` : '\n(no system prompt)');
      }),
    );

  withCommon(role.command('add'), true)
    .argument('<name>', 'role name')
    .requiredOption('--agents <ids>', 'agents in fallback order, comma-separated')
    .requiredOption('--mode <mode>', `one of ${MODES.join(', ')}`)
    .option('--isolation <isolation>', `one of ${ISOLATIONS.join(', ')}`)
    .option('--network <network>', `one of ${NETWORK_REQUESTS.join(', ')}`)
    .option('--model <model>', 'model for the role (overrides [models])')
    .option('--timeout <duration>', 'e.g. 90s, 10m, 1h')
    .option('--purpose <text>', 'one sentence shown in lists')
    .option('--prompt-file <file>', 'system prompt file, relative to .caesar/ (e.g. roles/<name>.md)')
    .description('Add or replace a role in a layer')
    .action(
      run(async (name: string, opts: CommonOptions & Record<string, string | undefined>) => {
        const ctx = contextOf(io, opts);
        const scope = scopeOf(opts);
        checkChoice('--mode', opts.mode, MODES);
        checkChoice('--isolation', opts.isolation, ISOLATIONS);
        checkChoice('--network', opts.network, NETWORK_REQUESTS);
        if (opts.timeout !== undefined) {
          try {
            parseDuration(opts.timeout);
          } catch (err) {
            throw new UsageError(`--timeout: ${(err as Error).message}`);
          }
        }
        const agentIds = (opts.agents ?? '').split(',').map((s) => s.trim()).filter(Boolean);
        const loaded = await load(ctx);
        const catalogue = catalogueOf(loaded, ctx);
        const unknown = agentIds.filter((id) => !catalogue.capabilities(id));
        const entry: Record<string, unknown> = { name, agents: agentIds, mode: opts.mode };
        for (const [opt, key] of [
          ['purpose', 'purpose'],
          ['isolation', 'isolation'],
          ['network', 'network'],
          ['timeout', 'timeout'],
          ['model', 'model'],
          ['promptFile', 'system_prompt_file'],
        ] as const) {
          if (opts[opt] !== undefined) entry[key] = opts[opt];
        }
        const target = targetLayer(loaded.files, scope);
        const result = await upsertRole(target.file, entry);
        const notices = unknown.length ? [`Unknown agent(s) ${unknown.join(', ')}: the role will skip them until they exist.`] : [];
        notices.push(...(await shadowNotices(ctx, scope, (l) => l.provenance.roles[name], `Role "${name}"`)));
        reportWrite(ctx, result, `Role ${name} saved in the ${scope} layer`, notices);
      }),
    );

  withCommon(role.command('remove'), true)
    .argument('<name>', 'role name')
    .description('Remove a role from the layer that declares it')
    .action(
      run(async (name: string, opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const scope = scopeOf(opts);
        const loaded = await load(ctx);
        const declaring = declaringLayers(loaded, (data) => Boolean(data.role?.some((r) => r.name === name)));
        if (!declaring.includes(scope)) {
          const isDefault = DEFAULT_ROLES.some((r) => r.name === name);
          if (declaring.length) {
            const where = declaring[declaring.length - 1]!;
            throw new UsageError(`Role "${name}" is not declared in the ${scope} layer; it is declared in the ${declaring.join(' and ')} layer: caesar role remove ${name}${flagOf(where)}`);
          }
          throw new UsageError(isDefault ? `Role "${name}" is a built-in default: it can be redefined (caesar role add) but not removed.` : `Unknown role "${name}".`);
        }
        const target = targetLayer(loaded.files, scope);
        const result = await removeRole(target.file, name);
        const after = await load(ctx);
        const still = after.provenance.roles[name];
        const notices = still ? [`Role "${name}" still exists, from the ${still} ${still === 'default' ? 'roles' : 'layer'}.`] : [];
        reportWrite(ctx, result, `Role ${name} removed from the ${scope} layer`, notices);
      }),
    );
}

function checkChoice(flag: string, value: string | undefined, allowed: readonly string[]): void {
  if (value !== undefined && !allowed.includes(value)) throw new UsageError(`${flag} must be one of ${allowed.join(', ')} (got "${value}").`);
}

function findRole(loaded: LoadedConfig, name: string): RoleConfig {
  const role = loaded.config.roles.find((r) => r.name === name);
  if (!role) throw new UsageError(`Unknown role "${name}". Known roles: ${loaded.config.roles.map((r) => r.name).join(', ')}.`);
  return role;
}

function roleView(role: RoleConfig): Record<string, unknown> & { name: string; mode: string; agents: string[] } {
  const { timeout_ms, ...rest } = role;
  return { ...rest, ...(timeout_ms !== undefined ? { timeout: formatConfigDuration(timeout_ms) } : {}) };
}
