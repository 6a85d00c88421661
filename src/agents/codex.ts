import type { EventDraft } from '../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator, TranslatorContext } from './types';
import {
  NativeSession, ToolPairing, UsageTotals, arr, clip, displayCommand, stdinPromptPlan, textDraft, lastNonEmpty, num, obj, parseJsonLine, parseJsonObject,
  relativeToWorkspace, str, summarizeInput, workspaceChangePath,
} from './stream';
import { acpPlan } from './acp-plan';

/**
 * OpenAI Codex CLI — `codex exec --json`.
 *
 * Verified on the real binary, codex-cli 0.171.0 (@openai/codex), against the project's fake OpenAI Responses server
 * inside a loopback-only namespace (../shared/agents/RECIPES.md, test/agents/live/codex.live.ts):
 * - flags `exec --json --skip-git-repo-check -C -s read-only|workspace-write --add-dir -m --output-schema -o -c`;
 *   `--full-auto` no longer exists;
 * - the prompt is read from stdin when the positional prompt is `-` (`codex exec --help`), so it stays off argv;
 * - stream: thread.started, turn.started, item.started/item.completed paired by item.id (command_execution,
 *   file_change with ABSOLUTE paths, mcp_tool_call), item.completed only for reasoning/agent_message/error items,
 *   turn.completed{usage}, error + turn.failed with exit code 1;
 * - `--output-schema` sends a strict json_schema to the model but does NOT validate the answer: the orchestrator
 *   validates the final message (written by codex itself to the `-o` file);
 * - network: only `sandbox_workspace_write.network_access` opens it, so only a writable sandbox can have it;
 * - a command the sandbox denies (e.g. `git add` on the read-only .git) often emits no item at all: git, not this
 *   stream, is the record of changes.
 * Config that is the user's business (model provider, base URL, analytics, features) comes from CODEX_HOME /
 * config.toml or the extra args, never from here.
 * - the return channel through caesar (`--channel`): codex starts `caesar channel serve` from these `-c` values and
 *   calls get_task, report_progress, ask_orchestrator (answered by `caesar answer` from another process) and
 *   submit_report (an invalid report refused, the fixed one accepted: report source `channel`), seen offline.
 * Unverified: `item.updated`, `web_search` and `todo_list` items (documented, never seen here).
 */
export const codexAdapter: AgentAdapter = {
  id: 'codex',
  envKeys: ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'CODEX_HOME', 'CODEX_API_KEY'],
  displayName: 'Codex',
  bin: 'codex',
  versionArgs: ['--version'],
  installHint: 'npm install -g @openai/codex (verified: 0.171.0)',
  capabilities: {
    nativeReadOnly: true,
    network: 'write-only',
    schemaTier: true,
    channel: true,
    model: true,
    reportsUsage: true,
  },
  build: buildCodex,
  createTranslator: (ctx) => new CodexTranslator(ctx),
  acp: {
    plan: buildCodexAcp,
    verified: 'codex-acp 0.16.0',
    // Measured with codex-acp 0.16.0 in bwrap 0.8: its own bubblewrap, started for each command, cannot mount /proc
    // inside ours ("Operation not permitted"), so every command failed there. Inside caesar's sandbox, which the kernel
    // enforces for its whole process tree (read-only workspace for a read-only task, the network cut), codex's own
    // sandbox is turned off; its approval policy (`untrusted`: ask before every command) is unchanged.
    insideSandbox: withoutOwnSandbox,
  },
};

/** The ACP adapter's executable (@zed-industries/codex-acp, verified 0.16.0; its own codex core). */
export const CODEX_ACP_BIN = 'codex-acp';

/**
 * `codex-acp -c …` (../shared/agents/ACP.md): only `-c key=value` is accepted. `approval_policy=untrusted` makes it ask
 * before every command (without it the default read-only mode denies silently). It needs a `bwrap` on PATH for its
 * sandbox, and never exits by itself. Unverified through codex-acp: `sandbox_mode` and the writable roots given by
 * `-c` (the captures switched modes with `session/set_mode`), and `model`.
 */
function buildCodexAcp(ctx: BuildContext): SpawnPlan {
  const { task } = ctx;
  const write = task.mode === 'write';
  const args = ['-c', 'approval_policy=untrusted', '-c', `sandbox_mode=${write ? '"workspace-write"' : '"read-only"'}`];
  if (write) args.push('-c', `sandbox_workspace_write.writable_roots=${JSON.stringify([ctx.taskDir])}`);
  if (write && task.network) args.push('-c', 'sandbox_workspace_write.network_access=true');
  if (ctx.model) args.push('-c', `model=${JSON.stringify(ctx.model)}`);
  return acpPlan(CODEX_ACP_BIN, args, ctx);
}

/** codex-acp's plan inside caesar's sandbox: `sandbox_mode="danger-full-access"`, so it starts no bubblewrap of its own. */
function withoutOwnSandbox(plan: SpawnPlan): SpawnPlan {
  const args: string[] = [];
  for (let i = 0; i < plan.args.length; i++) {
    const value = plan.args[i + 1] ?? '';
    if (plan.args[i] === '-c' && /^(sandbox_mode|sandbox_workspace_write\.)/.test(value)) {
      i++;
      continue;
    }
    args.push(plan.args[i] ?? '');
  }
  args.unshift('-c', 'sandbox_mode="danger-full-access"');
  return { ...plan, args, display: displayCommand(plan.command, args) };
}

function buildCodex(ctx: BuildContext): SpawnPlan {
  const { task } = ctx;
  const write = task.mode === 'write';
  const args = ['exec', '--json', '--skip-git-repo-check', '-C', task.workspace, '-s', write ? 'workspace-write' : 'read-only'];
  // The report file lives in the task directory, outside a worktree: the writable sandbox must reach it.
  if (write) args.push('--add-dir', ctx.taskDir);
  if (write && task.network) args.push('-c', 'sandbox_workspace_write.network_access=true');
  if (ctx.model) args.push('-m', ctx.model);
  if (ctx.tier === 'schema') args.push('--output-schema', ctx.reportSchemaFile);
  args.push('-o', ctx.finalMessageFile);
  if (ctx.tier === 'channel' && task.channel) {
    const key = `mcp_servers.${task.channel.server_name}`;
    // `-c` values are TOML; a JSON string or array of strings is valid TOML.
    args.push('-c', `${key}.command=${JSON.stringify(task.channel.command)}`);
    args.push('-c', `${key}.args=${JSON.stringify(task.channel.args)}`);
    // Without it codex refuses MCP calls under the default approval policy (seen in 0.171.0).
    args.push('-c', `${key}.default_tools_approval_mode="approve"`);
  }
  args.push('-');
  args.push(...ctx.extraArgs);
  return stdinPromptPlan(codexAdapter.bin, args, ctx);
}

/** Strips the `/bin/bash -lc '…'` wrapper codex puts around every command, for reading. */
function readableCommand(command: unknown): string {
  const text = Array.isArray(command) ? command.map(String).join(' ') : (str(command) ?? '');
  const wrapped = /^\/bin\/(?:ba)?sh -lc '([\s\S]*)'$/.exec(text);
  return clip(wrapped ? wrapped[1]!.replace(/'\\''/g, "'") : text);
}

const FILE_ACTIONS: Record<string, 'created' | 'modified' | 'deleted' | 'renamed'> = {
  add: 'created',
  delete: 'deleted',
  update: 'modified',
  rename: 'renamed',
};

class CodexTranslator implements Translator {
  /** The CLI's own session id (stream.ts NativeSession): what a follow-up resumes. */
  private readonly session = new NativeSession();
  private readonly tools = new ToolPairing();
  private readonly usage = new UsageTotals();
  private finalText: string | undefined;
  private lastError: string | undefined;
  private failure: string | undefined;

  constructor(private readonly ctx?: TranslatorContext) {}

  line(native: string): EventDraft[] {
    const event = parseJsonLine(native);
    if (!event) return [];
    if (str(event.type) === 'thread.started') this.session.note(event.thread_id);
    switch (str(event.type)) {
      case 'item.started':
      case 'item.updated':
        return this.itemStarted(obj(event.item));
      case 'item.completed':
        return this.itemCompleted(obj(event.item));
      case 'turn.completed': {
        const usage = obj(event.usage);
        this.usage.add({ input_tokens: num(usage.input_tokens), output_tokens: num(usage.output_tokens) });
        return [];
      }
      case 'error':
        return this.streamError(str(event.message) ?? 'codex reported an error');
      case 'turn.failed': {
        const message = str(obj(event.error).message) ?? 'codex turn failed';
        this.failure = message;
        // codex repeats the preceding `error` line here: show it once, now as the fatal one.
        if (message === this.lastError) return [];
        return [{ type: 'error', message, fatal: true }];
      }
      default:
        return [];
    }
  }

  private itemStarted(item: Record<string, unknown>): EventDraft[] {
    const id = str(item.id) ?? '';
    const start = this.describe(item);
    return start ? this.tools.start(id, start.tool, start.summary) : [];
  }

  private itemCompleted(item: Record<string, unknown>): EventDraft[] {
    const id = str(item.id) ?? '';
    switch (str(item.type)) {
      case 'agent_message': {
        const text = str(item.text) ?? '';
        this.finalText = lastNonEmpty(this.finalText, text);
        return textDraft('message', text);
      }
      case 'reasoning': {
        const text = str(item.text) ?? '';
        return textDraft('thinking', text);
      }
      case 'error': {
        // Non-fatal notices, e.g. "Model metadata for `x` not found" before the turn starts.
        const message = str(item.message) ?? 'codex reported an error';
        return [{ type: 'error', message, fatal: false }];
      }
      case 'file_change':
        return [...this.closeTool(item, id), ...this.fileChanges(item)];
      default:
        return this.describe(item) ? this.closeTool(item, id) : [];
    }
  }

  private closeTool(item: Record<string, unknown>, id: string): EventDraft[] {
    const start = this.describe(item);
    const status = str(item.status);
    const exitCode = num(item.exit_code);
    const failed = status === 'failed' || status === 'declined' || (exitCode !== undefined && exitCode !== 0) || item.error != null;
    return this.tools.end(id, !failed, start ?? {});
  }

  /** The tool name and summary of a tool-like item; undefined for items that are not tool calls. */
  private describe(item: Record<string, unknown>): { tool: string; summary: string } | undefined {
    switch (str(item.type)) {
      case 'command_execution':
        return { tool: 'shell', summary: readableCommand(item.command) };
      case 'file_change':
        return {
          tool: 'apply_patch',
          summary: clip(arr(item.changes).map((c) => relativeToWorkspace(str(obj(c).path) ?? '', this.ctx?.workspace)).join(', ')),
        };
      case 'mcp_tool_call':
        return { tool: `mcp:${str(item.server) ?? '?'}/${str(item.tool) ?? '?'}`, summary: summarizeInput(item.arguments) };
      case 'web_search':
        return { tool: 'web_search', summary: clip(str(item.query) ?? '') };
      default:
        return undefined;
    }
  }

  private fileChanges(item: Record<string, unknown>): EventDraft[] {
    if (str(item.status) === 'failed') return [];
    return arr(item.changes).flatMap((raw): EventDraft[] => {
      const change = obj(raw);
      const file = workspaceChangePath(str(change.path) ?? '', this.ctx?.workspace);
      if (!file) return [];
      const action = FILE_ACTIONS[str(change.kind) ?? ''] ?? 'modified';
      return [{ type: 'file_changed', path: file, action }];
    });
  }

  private streamError(message: string): EventDraft[] {
    // Retries are progress, not failures: "Reconnecting... 2/5 (…)".
    if (/^Reconnecting\.\.\./.test(message)) return [{ type: 'progress', message }];
    this.lastError = message;
    return [{ type: 'error', message, fatal: false }];
  }

  sessionId(): string | undefined {
    return this.session.get();
  }

  end(exitCode: number | null): TranslationSummary {
    const summary: TranslationSummary = {};
    if (this.finalText !== undefined) summary.finalText = this.finalText;
    const structured = parseJsonObject(this.finalText);
    if (structured) summary.structuredOutput = structured;
    const usage = this.usage.get();
    if (usage) summary.usage = usage;
    const failure = this.failure ?? (exitCode !== null && exitCode !== 0 ? (this.lastError ?? `codex exited with code ${exitCode}`) : undefined);
    if (failure) summary.nativeFailure = failure;
    const sessionId = this.session.get();
    if (sessionId) summary.sessionId = sessionId;
    return summary;
  }
}
