import type { Command } from 'commander';
import { DEFAULT_TRANSPORT, TRANSPORTS, declaringLayers, setModel, setTransport, targetLayer, unsetModel, unsetTransport, type TransportName } from '../../config';
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

/** `caesar agents list|enable|disable|set-model|unset-model|set-transport|unset-transport`. */
export function registerAgents(program: Command, io: CliIo): void {
  const agents = program.command('agents').description('List agents and change which are enabled, which model they use and how caesar talks to them');

  withCommon(agents.command('list'), false)
    .description('Each agent with its install and policy status and its configured model')
    .action(
      configAction(async (opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const statuses = await agentStatuses(loaded, catalogueOf(loaded, ctx));
        const transportOf = (id: string) => ({ value: loaded.config.transports[id] ?? DEFAULT_TRANSPORT, origin: loaded.provenance.transports[id] ?? 'default' });
        if (ctx.json) {
          printJson(ctx.io, { agents: statuses.map((a) => ({ ...a, transport: transportOf(a.id) })) });
          return;
        }
        for (const a of statuses) {
          const model = a.model ? ` model ${a.model.value} (${a.model.origin})` : '';
          const transport = transportOf(a.id);
          const over = transport.origin === 'default' ? '' : ` transport ${transport.value} (${transport.origin})`;
          ctx.io.out(`${a.id.padEnd(12)} ${a.installed ? 'installed' : 'not found'}  ${a.allowed ? 'allowed' : `refused (${a.refusal!.rule})`}${model}${over}`);
        }
        // The list is without the programs of an untrusted repository file: say so rather than let it pass as whole.
        for (const u of loaded.untrusted) ctx.io.err(`note: ${u.file} names programs and is not trusted, so its agents are not listed (caesar trust --show).`);
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
  withCommon(agents.command('set-transport'), true)
    .argument('<id>', 'agent id')
    .argument('<transport>', `${TRANSPORTS.join(' or ')}: the agent's own JSON stream, or the Agent Client Protocol (asks before running commands)`)
    .description('Set how caesar talks to an agent ([transport] of a layer)')
    .action(
      configAction(async (id: string, transport: string, opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const catalogue = catalogueOf(loaded, ctx);
        assertKnownAgent(catalogue, id);
        if (!(TRANSPORTS as readonly string[]).includes(transport)) throw new UsageError(`Unknown transport "${transport}": expected ${TRANSPORTS.join(' or ')}.`);
        if (transport === 'acp' && !catalogue.speaksAcp?.(id)) throw new UsageError(`Agent "${id}" cannot run over ACP: caesar has no ACP command line for it (caesar doctor lists the agents that can).`);
        const target = targetLayer(loaded.files, scopeOf(opts));
        const result = await setTransport(target.file, id, transport as TransportName);
        const notices = await shadowNotices(ctx, target.scope, (l) => l.provenance.transports[id], `[transport] ${id}`, (flag) => `caesar agents set-transport ${id} ${transport}${flag}`);
        reportWrite(ctx, result, `${id} now runs over ${transport} in the ${target.scope} layer`, notices);
      }),
    );

  withCommon(agents.command('unset-transport'), true)
    .argument('<id>', 'agent id')
    .description(`Remove an agent's transport from a layer (back to the inherited one, or "${DEFAULT_TRANSPORT}")`)
    .action(
      configAction(async (id: string, opts: CommonOptions) => {
        const ctx = contextOf(io, opts);
        const loaded = await load(ctx);
        const scope = scopeOf(opts);
        const declaring = declaringLayers(loaded, (data) => data.transport?.[id] !== undefined);
        if (!declaring.includes(scope)) {
          throw new UsageError(
            declaring.length
              ? `The ${scope} layer does not set a transport for "${id}"; ${declaring.join(' and ')} does: caesar agents unset-transport ${id}${flagOf(declaring[declaring.length - 1]!)}`
              : `No layer sets a transport for "${id}".`,
          );
        }
        const target = targetLayer(loaded.files, scope);
        const result = await unsetTransport(target.file, id);
        reportWrite(ctx, result, `Removed the transport of ${id} from the ${scope} layer`);
      }),
    );
}
