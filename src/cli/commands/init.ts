import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Command } from 'commander';
import {
  DEFAULT_POLICY,
  DEFAULT_ROLE_PROMPTS,
  DEFAULT_ROLES,
  POLICY_TOML_KEY,
  formatConfigDuration,
  layerFiles,
  trustRepositoryConfig,
  writeLayer,
  writeFileAtomic,
  type PolicyKey,
  type RoleConfig,
} from '../../config';
import { detectWorkshop, gitToplevel } from '../../engine/tasks';
import { printJson, type CliIo } from '../io';
import {
  type CommonOptions,
  type Context,
  contextOf,
  configAction,
  withCommon,
} from './config-common';

const GITIGNORE_LINES = ['.caesar/config.local.toml', '.caesar/tasks/', '.caesar/wt/', '.caesar/state/'];

const PROJECT_HEADER = `# Caesar project configuration, shared with everyone working on this repository.
# Personal overrides go to .caesar/config.local.toml (not committed), your defaults to ~/.config/caesar/config.toml.
# See the effective values with: caesar policy show / caesar role list / caesar doctor
`;

const GLOBAL_HEADER = `# Caesar global configuration: your defaults for every project.
# Projects override it in .caesar/config.toml and .caesar/config.local.toml.
`;

/** `caesar init`: the project's config (with a detected [worktree]), role prompts and .gitignore lines, or the global defaults. */
export function registerInit(program: Command, io: CliIo): void {
  withCommon(program.command('init'), false)
    .description('Set up caesar here: project config (with a detected [worktree]), role prompts, .gitignore lines')
    .option('--global', 'write the full default configuration into ~/.config/caesar/config.toml instead')
    .option('--force', 'rewrite the config and the role prompts even if they exist')
    .action(
      configAction(async (opts: CommonOptions & { force?: boolean }) => {
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
  let trusted: string[] = [];

  const gitRoot = await gitToplevel(ctx.root);
  let worktree: { copy: string[]; setup: string[]; marker?: string } | undefined;
  if (!refreshed) {
    const suggestion = gitRoot ? await detectWorkshop(ctx.root) : undefined;
    worktree = suggestion ? { copy: suggestion.copy, setup: suggestion.setup, ...(suggestion.marker ? { marker: suggestion.marker } : {}) } : undefined;
    const data = worktree ? { worktree: { copy: worktree.copy, setup: worktree.setup } } : {};
    await writeLayer(configFile, data, worktree ? `${PROJECT_HEADER}\n` : PROJECT_HEADER);
    written.push(configFile);
    // The setup commands are caesar's own detection, written at the user's request: the file is trusted as written,
    // so the next `caesar run` needs no `caesar trust` (any later change to it asks, as for any other file).
    if (worktree?.setup.length) trusted = (await trustRepositoryConfig(ctx.root, ctx.home, 'caesar init')).map((r) => r.file);
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
    printJson(ctx.io, { root: ctx.root, refreshed, written, trusted, gitignore_added: gitignoreAdded, worktree: worktree ?? null, warnings });
    return;
  }
  ctx.io.out(refreshed ? `caesar is already set up in ${ctx.root}; refreshed what was missing (use --force to rewrite the config and prompts).` : `caesar is set up in ${ctx.root}.`);
  for (const file of written) ctx.io.out(`  wrote ${path.relative(ctx.root, file) || file}`);
  if (gitignoreAdded.length) ctx.io.out(`  .gitignore: added ${gitignoreAdded.join(', ')}`);
  if (worktree) ctx.io.out(`  [worktree] detected${worktree.marker ? ` from ${worktree.marker}` : ''}: copy ${JSON.stringify(worktree.copy)}, setup ${JSON.stringify(worktree.setup)}`);
  if (trusted.length) ctx.io.out(`  trusted ${trusted.map((f) => path.relative(ctx.root, f)).join(', ')} as written, for its setup commands (caesar trust --show; any change asks again)`);
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
