import * as path from 'node:path';
import type { Command } from 'commander';
import { homeDir } from '../config';
import { findProgram } from '../engine/tasks';
import { UsageError, printJson, type CliIo } from '../cli/io';
import { resolveRoot } from '../cli/root';
import { MCP_CLIENTS, McpInstallError, applyPlan, describePlan, installTarget, planChange, serverEntry, type InstallScope, type McpClient, type ServerCommand } from '../mcp/install';

/**
 * `caesar mcp serve|install|uninstall` and `caesar channel serve`: the MCP servers hosted by the same bundle as the
 * CLI. Registered from src/bin because src/cli and src/mcp are peers that never import each other.
 */
export function registerMcpCommands(program: Command, io: CliIo): void {
  const mcp = program.command('mcp').description('The MCP server that lets a chat agent delegate through caesar, and its registration in MCP clients');

  mcp
    .command('serve')
    .description('Serve the ten caesar_* orchestrator tools over stdio (stdout carries protocol messages only)')
    .option('--root <dir>', 'the caesar root (default: first ancestor holding .caesar/ or .git/)')
    .action(async (opts: { root?: string }) => {
      const root = resolveRoot(io.cwd, opts.root);
      // Loaded on demand: the MCP SDK and its schema validator are a large part of the bundle, and `caesar run` or
      // `caesar ps` would otherwise evaluate them on every start (issue 14: start time and memory).
      const { serveOrchestrator } = await import('../mcp/orchestrator/server');
      await serveOrchestrator({ root, env: io.env });
      // The client is gone: a caesar_await still waiting would keep watchers alive for nobody. Tasks run on under
      // their own supervisors, so ending this process loses nothing.
      setTimeout(() => process.exit(0), 200);
    });

  for (const action of ['install', 'uninstall'] as const) {
    mcp
      .command(action)
      .description(
        action === 'install'
          ? "Register `caesar mcp serve` in an MCP client's configuration (merged: nothing else in the file changes)"
          : "Remove caesar's entry from an MCP client's configuration",
      )
      .argument('<client>', MCP_CLIENTS.join(' | '))
      .option('--scope <scope>', 'user (your own config) | project (the repository\'s, to share)', 'user')
      .option('--dry-run', 'print the change, write nothing')
      .option('--root <dir>', 'the caesar root the server works in (default: first ancestor holding .caesar/ or .git/)')
      .option('--json', 'print JSON only')
      .action(async (client: string, opts: { scope: string; dryRun?: boolean; root?: string; json?: boolean }) => {
        if (!(MCP_CLIENTS as readonly string[]).includes(client)) throw new UsageError(`Unknown MCP client "${client}": one of ${MCP_CLIENTS.join(', ')}.`);
        if (opts.scope !== 'user' && opts.scope !== 'project') throw new UsageError(`--scope must be user or project (got "${opts.scope}").`);
        const root = resolveRoot(io.cwd, opts.root);
        try {
          const target = installTarget(client as McpClient, opts.scope as InstallScope, root, homeDir(io.env), io.env);
          const entry = action === 'install' ? serverEntry(client as McpClient, await serverCommand(root, io.env)) : undefined;
          const plan = await planChange(target, entry);
          if (!opts.dryRun) await applyPlan(plan);
          if (opts.json) {
            printJson(io, { client, scope: target.scope, file: target.file, action, dry_run: Boolean(opts.dryRun), changed: plan.changed, entry: entry ?? null });
          } else if (opts.dryRun) {
            io.out(describePlan(plan));
          } else {
            io.out(
              !plan.changed
                ? `${target.file}: already ${action === 'install' ? 'registered' : 'absent'}, nothing changed.`
                : action === 'install'
                  ? `Registered caesar in ${client}'s ${target.scope} configuration (${target.file}).`
                  : `Removed caesar from ${client}'s ${target.scope} configuration (${target.file}).`,
            );
          }
        } catch (err) {
          if (err instanceof McpInstallError) throw new UsageError(err.message);
          throw err;
        }
      });
  }
}

export function registerChannelCommands(program: Command, io: CliIo): void {
  program
    .command('channel')
    .description("The return channel an agent uses to talk to its task's orchestrator (launched per task by the supervisor)")
    .command('serve')
    .description('Serve the four channel tools for one task over stdio')
    .requiredOption('--task-dir <dir>', "the task's directory (<root>/.caesar/tasks/<id>)")
    .action(async (opts: { taskDir: string }) => {
      const { serveChannel } = await import('../mcp/channel/server');
      await serveChannel({ taskDir: path.resolve(io.cwd, opts.taskDir) });
    });
}

/** `caesar` when it is on PATH (an installed package); otherwise this very bundle run by this Node. */
async function serverCommand(root: string, env: NodeJS.ProcessEnv): Promise<ServerCommand> {
  const args = ['mcp', 'serve', '--root', root];
  if (await findProgram('caesar', env)) return { command: 'caesar', args };
  const script = process.argv[1] ? path.resolve(process.argv[1]) : 'caesar';
  return { command: process.execPath, args: [script, ...args] };
}
