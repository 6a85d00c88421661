import type { Command } from 'commander';
import {
  POLICY_TOML_KEY,
  POLICY_TOML_KEYS,
  formatConfigDuration,
  parsePolicyValue,
  setPolicyValue,
  targetLayer,
  type PolicyKey,
} from '../../config';
import { printJson, type CliIo } from '../io';
import {
  type CommonOptions,
  contextOf,
  scopeOf,
  load,
  configAction,
  withCommon,
  reportWrite,
  shadowNotices,
  editList,
  loosenedNotices,
} from './config-common';

/** `caesar policy show|allow|deny|set`. */
export function registerPolicy(program: Command, io: CliIo): void {
  const policy = program.command('policy').description('Show and edit the delegation policy');

  withCommon(policy.command('show'), false)
    .description('Each policy field with its value and the layer it comes from')
    .action(
      configAction(async (opts: CommonOptions) => {
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
        const notes = loaded.notes.map((n) => n.message);
        if (ctx.json) {
          printJson(ctx.io, { policy: fields, files: loaded.files, notes });
          return;
        }
        for (const f of fields) ctx.io.out(`${f.key.padEnd(20)} ${JSON.stringify(f.value).padEnd(24)} (${f.origin})`);
        for (const note of notes) ctx.io.err(`note: ${note}`);
      }),
    );

  withCommon(policy.command('allow'), true)
    .argument('<id>', 'agent id')
    .description('Add an agent to the allowed list (a non-empty list refuses every other agent)')
    .action(configAction(async (id: string, opts: CommonOptions) => editList(io, opts, 'allowed', id, 'add')));

  withCommon(policy.command('deny'), true)
    .argument('<id>', 'agent id')
    .description('Add an agent to the denied list')
    .action(configAction(async (id: string, opts: CommonOptions) => editList(io, opts, 'denied', id, 'add')));

  withCommon(policy.command('set'), true)
    .argument('<key>', `the policy key: ${POLICY_TOML_KEYS.join(', ')}`)
    .argument('<value>', 'true/false, a number, a word (e.g. worktree), a duration (e.g. 10m), or agent ids separated by commas')
    .description('Set one [policy] value in a layer, checked as loading checks it (comments in the file are kept)')
    .action(configAction(async (key: string, value: string, opts: CommonOptions) => setPolicy(io, opts, key, value)));
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
  notices.push(...(await loosenedNotices(ctx, scope, policyKey, `caesar policy set ${key} ${text} --global`)));
  reportWrite(ctx, result, `${key} = ${JSON.stringify(value)} in the ${scope} layer`, notices);
}

