import * as path from 'node:path';
import type { EventDraft } from '../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator, TranslatorContext } from './types';
import { NativeSession, ToolPairing, UsageTotals, arr, stdinPromptPlan, textDraft, lastNonEmpty, num, obj, parseJsonLine, str, summarizeInput, workspaceChangePath } from './stream';
import { acpPlan } from './acp-plan';

/**
 * GitHub Copilot CLI — `copilot -p --output-format json`.
 *
 * Verified on the real binary, 1.0.102 (@github/copilot; the `copilot` bin is a Node loader that starts the native
 * `@github/copilot-linux-x64/copilot`), in bring-your-own-key mode against the project's fake Anthropic Messages
 * server inside a loopback-only namespace (../shared/agents/RECIPES.md, test/agents/live/copilot.live.ts):
 * - without `-p`, a piped stdin is the prompt (non-interactive, exits when done): the brief stays off argv. With
 *   `-p`, piped stdin is ignored (seen: the model received only the `-p` text);
 * - without `--allow-all-tools` writes and shell commands are denied headless (exit code still 0) while reads run;
 *   read-only mode therefore pre-approves only `write(<report path>)` and denies `shell` (a deny rule would beat any
 *   allow rule, so `write` itself is not denied) — seen: the read succeeds, a workspace write fails, the report lands;
 * - stream lines `{type, data, id, timestamp, parentId}`: assistant.message{content, toolRequests},
 *   assistant.reasoning, tool.execution_start{toolCallId, toolName, arguments, mcpServerName?},
 *   tool.execution_complete{toolCallId, success, error?, fileEdits?}, session.error, result{exitCode,
 *   usage{premiumRequests, totalApiDurationMs, sessionDurationMs, codeChanges}} — no tokens, no cost;
 * - SIGTERM to the loader orphans the native process: the orchestrator kills the whole process group.
 * Config that is the user's business (COPILOT_PROVIDER_*, COPILOT_OFFLINE, COPILOT_MODEL) comes from the inherited
 * environment. Unverified: `--additional-mcp-config @file` with the caesar channel server (MCP itself was seen
 * working in a capture with another server).
 */
export const copilotAdapter: AgentAdapter = {
  id: 'copilot',
  envKeys: ['GH_TOKEN', 'GITHUB_TOKEN', 'GH_HOST', 'COPILOT_*', 'XDG_CONFIG_HOME'],
  displayName: 'GitHub Copilot',
  bin: 'copilot',
  versionArgs: ['--version'],
  installHint: 'npm install -g @github/copilot (verified: 1.0.102)',
  capabilities: {
    nativeReadOnly: true,
    // --allow-all-urls only governs its fetch tool; its shell reaches the network regardless.
    network: 'open',
    schemaTier: false,
    channel: true,
    model: true,
    reportsUsage: true,
  },
  build: buildCopilot,
  createTranslator: (ctx) => new CopilotTranslator(ctx),
  acp: {
    // ../shared/agents/ACP.md: `--acp --stdio`; without --allow-all-tools it asks for shell and writes. It exits when
    // stdin closes. Unverified with --acp: --add-dir (the report file) and --model.
    plan: (ctx) =>
      acpPlan(copilotAdapter.bin, ['--acp', '--stdio', '--no-auto-update', '--add-dir', ctx.taskDir, ...(ctx.model ? ['--model', ctx.model] : [])], ctx),
    verified: '1.0.102',
  },
};

function buildCopilot(ctx: BuildContext): SpawnPlan {
  const { task } = ctx;
  const args = ['--output-format', 'json', '--no-color', '--no-auto-update', '--no-ask-user'];
  // Read-only: nothing is pre-approved but writing the report file, so every other write (and every shell command)
  // is denied headless. A deny rule would beat any allow rule, which would forbid the report too.
  if (task.mode === 'write') args.push('--allow-all-tools');
  else args.push(`--allow-tool=write(${task.report_path})`, '--deny-tool=shell');
  if (task.network) args.push('--allow-all-urls');
  args.push('--add-dir', ctx.taskDir);
  if (ctx.model) args.push('--model', ctx.model);
  const files: SpawnPlan['files'] = [];
  if (ctx.tier === 'channel' && task.channel) {
    const configFile = path.join(ctx.taskDir, 'copilot-mcp-config.json');
    const server = { type: 'local', command: task.channel.command, args: task.channel.args, tools: ['*'] };
    files.push({ path: configFile, content: JSON.stringify({ mcpServers: { [task.channel.server_name]: server } }, null, 2) });
    args.push('--additional-mcp-config', `@${configFile}`);
  }
  args.push(...ctx.extraArgs);
  return stdinPromptPlan(copilotAdapter.bin, args, ctx, { files });
}

const EDIT_ACTIONS: Record<string, 'created' | 'modified' | 'deleted'> = { create: 'created', edit: 'modified', delete: 'deleted' };

class CopilotTranslator implements Translator {
  /** The CLI's own session id (stream.ts NativeSession): what a follow-up resumes. */
  private readonly session = new NativeSession();
  private readonly tools = new ToolPairing();
  private readonly usage = new UsageTotals();
  private finalText: string | undefined;
  private failure: string | undefined;
  private resultExit: number | undefined;

  constructor(private readonly ctx?: TranslatorContext) {}

  line(native: string): EventDraft[] {
    const event = parseJsonLine(native);
    if (!event) return [];
    if (str(event.type) === 'result') this.session.note(event.sessionId);
    const data = obj(event.data);
    switch (str(event.type)) {
      case 'assistant.message': {
        const text = str(data.content) ?? '';
        this.finalText = lastNonEmpty(this.finalText, text);
        return textDraft('message', text);
      }
      case 'assistant.reasoning': {
        const text = str(data.content) ?? '';
        return textDraft('thinking', text);
      }
      case 'tool.execution_start':
        return this.tools.start(str(data.toolCallId) ?? '', toolName(data), summarizeInput(data.arguments));
      case 'tool.execution_complete':
        return [...this.tools.end(str(data.toolCallId) ?? '', data.success === true), ...this.fileEdits(data)];
      case 'session.error': {
        const message = str(data.message) ?? 'copilot reported an error';
        this.failure = message;
        return [{ type: 'error', message, fatal: true }];
      }
      case 'session.info':
        // Retries of a failing model call: worth seeing while it waits.
        return str(data.infoType) === 'model_retry' ? [{ type: 'progress', message: str(data.message) ?? 'Retrying the model call' }] : [];
      case 'result':
        return this.result(event);
      default:
        return [];
    }
  }

  private fileEdits(data: Record<string, unknown>): EventDraft[] {
    if (data.success !== true) return [];
    return arr(data.fileEdits).flatMap((raw): EventDraft[] => {
      const edit = obj(raw);
      const file = workspaceChangePath(str(edit.path) ?? '', this.ctx?.workspace);
      if (!file) return [];
      return [{ type: 'file_changed', path: file, action: EDIT_ACTIONS[str(edit.kind) ?? ''] ?? 'modified' }];
    });
  }

  private result(event: Record<string, unknown>): EventDraft[] {
    const usage = obj(event.usage);
    this.usage.set({ duration_ms: num(usage.sessionDurationMs) ?? num(usage.totalApiDurationMs) });
    this.resultExit = num(event.exitCode);
    return [];
  }

  sessionId(): string | undefined {
    return this.session.get();
  }

  end(exitCode: number | null): TranslationSummary {
    const summary: TranslationSummary = {};
    if (this.finalText !== undefined) summary.finalText = this.finalText;
    const usage = this.usage.get();
    if (usage) summary.usage = usage;
    const declared = this.resultExit !== undefined && this.resultExit !== 0 ? `copilot reported exit code ${this.resultExit}` : undefined;
    const failure = this.failure ?? declared ?? (exitCode !== null && exitCode !== 0 ? `copilot exited with code ${exitCode}` : undefined);
    if (failure) summary.nativeFailure = failure;
    const sessionId = this.session.get();
    if (sessionId) summary.sessionId = sessionId;
    return summary;
  }
}

function toolName(data: Record<string, unknown>): string {
  const server = str(data.mcpServerName);
  const tool = str(data.mcpToolName);
  if (server && tool) return `mcp:${server}/${tool}`;
  return str(data.toolName) ?? 'tool';
}
