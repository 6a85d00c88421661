import type { Command } from 'commander';
import {
  DEFAULT_ROLES,
  ISOLATIONS,
  MODES,
  NETWORK_REQUESTS,
  declaringLayers,
  formatConfigDuration,
  parseDuration,
  readRolePrompt,
  removeRole,
  targetLayer,
  upsertRole,
  type LoadedConfig,
  type RoleConfig,
} from '../../config';
import { pickForRole } from '../../engine/tasks';
import { UsageError, printJson, type CliIo } from '../io';
import {
  type CommonOptions,
  contextOf,
  scopeOf,
  load,
  catalogueOf,
  configAction,
  withCommon,
  reportWrite,
  flagOf,
  shadowNotices,
} from './config-common';

/** `caesar role list|show|add|remove`. */
export function registerRoles(program: Command, io: CliIo): void {
  const role = program.command('role').description('Roles: a named agent fallback list with a mode and defaults');

  withCommon(role.command('list'), false)
    .description('Each role with the agent it would pick today')
    .action(
      configAction(async (opts: CommonOptions) => {
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
      configAction(async (name: string, opts: CommonOptions) => {
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
      configAction(async (name: string, opts: CommonOptions & Record<string, string | undefined>) => {
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
      configAction(async (name: string, opts: CommonOptions) => {
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
