import type { Command } from 'commander';
import { declaringLayers, setModel, targetLayer, unsetModel } from '../../config';
import { agentStatuses } from '../../engine/tasks';
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
  assertKnownAgent,
  shadowNotices,
  editList,
} from './config-common';

/** `caesar agents list|enable|disable|set-model|unset-model`. */
export function registerAgents(program: Command, io: CliIo): void {
  const agents = program.command('agents').description('List agents and change which are enabled and which model they use');

  withCommon(agents.command('list'), false)
    .description('Each agent with its install and policy status and its configured model')
    .action(
      configAction(async (opts: CommonOptions) => {
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
    .action(configAction(async (id: string, opts: CommonOptions) => editList(io, opts, 'denied', id, 'remove')));

  withCommon(agents.command('disable'), true)
    .argument('<id>', 'agent id')
    .description('Add the agent to the denied list of a layer')
    .action(configAction(async (id: string, opts: CommonOptions) => editList(io, opts, 'denied', id, 'add')));

  withCommon(agents.command('set-model'), true)
    .argument('<id>', 'agent id')
    .argument('<model>', 'model name, passed to the agent as is')
    .description('Set the model an agent uses by default ([models] of a layer)')
    .action(
      configAction(async (id: string, model: string, opts: CommonOptions) => {
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
      configAction(async (id: string, opts: CommonOptions) => {
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
