import * as path from 'node:path';
import { strictReportSchema, type EventDraft } from '../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator } from './types';
import { NativeSession, ToolPairing, UsageTotals, arr, stdinPromptPlan, isObject, lastNonEmpty, num, obj, parseJsonLine, str, summarizeInput } from './stream';
import { acpPlan } from './acp-plan';

/**
 * Claude Code — `claude -p --output-format stream-json --verbose`.
 *
 * Verified on the real binary, 2.1.332 (Claude Code) (@anthropic-ai/claude-code; runs on Node 20 although it declares
 * >=22), against the project's fake Anthropic Messages server inside a loopback-only namespace
 * (../shared/agents/RECIPES.md, test/agents/live/claude.live.ts):
 * - `-p` with no prompt argument reads the prompt from stdin, so it stays off argv;
 * - `stream-json` needs `--verbose`; headless, `acceptEdits` lets Write and Bash run, `plan` denies them
 *   (a denial is a failed tool_result, the exit code stays 0); `bypassPermissions` fails as root;
 * - ONE `assistant` line per content block, repeating the same message.id; the tool close is a `user` line whose
 *   tool_result names no tool, only `tool_use_id`;
 * - API errors: a synthetic assistant line (`model: "<synthetic>"`, `error`) then `result{is_error: true}`, exit 1 —
 *   `subtype` may still say "success": `is_error` is the signal;
 * - `--json-schema <json>` adds a StructuredOutput tool and puts the answer in `result.structured_output`; if the
 *   model never calls it the run still "succeeds" with no structured output: the orchestrator validates;
 * - `result.total_cost_usd`, `usage`, `duration_ms` carry the usage.
 * Config that is the user's business (ANTHROPIC_BASE_URL, API key, CLAUDE_CODE_MAX_RETRIES, telemetry switches)
 * comes from the inherited environment.
 * Unverified: `--mcp-config` with the caesar channel server (MCP itself was seen working in a capture with another
 * server); `--include-partial-messages` is not used (its `stream_event` lines are ignored).
 */
export const claudeAdapter: AgentAdapter = {
  id: 'claude',
  envKeys: ['ANTHROPIC_*', 'CLAUDE_CODE_*', 'CLAUDE_CONFIG_DIR', 'DISABLE_TELEMETRY', 'DISABLE_AUTOUPDATER'],
  displayName: 'Claude Code',
  bin: 'claude',
  versionArgs: ['--version'],
  installHint: 'npm install -g @anthropic-ai/claude-code@2.1.332 (the version verified here; on Node 20 an unpinned install picks 2.1.197)',
  capabilities: {
    nativeReadOnly: true,
    network: 'open',
    schemaTier: true,
    channel: true,
    model: true,
    reportsUsage: true,
  },
  build: buildClaude,
  createTranslator: () => new ClaudeTranslator(),
  acp: {
    // ../shared/agents/ACP.md: the `claude-agent-acp` adapter (npm @zed-industries/claude-agent-acp), found on PATH as
    // `claude` is; its default mode asks for Bash and edits. It runs the Claude Code bundled in its own dependency
    // unless CLAUDE_CODE_EXECUTABLE names another (the user's environment). The model goes by ANTHROPIC_MODEL
    // (unverified through the adapter). It never exits by itself: the engine ends its process group.
    plan: (ctx) => acpPlan(CLAUDE_ACP_BIN, [], ctx, { env: claudeAcpEnv(ctx.model) }),
    verified: 'claude-agent-acp 0.23.1',
  },
};

/**
 * As root, claude-agent-acp 0.23.1 fails `session/new` ("Query closed before response received": the Claude Code it
 * starts refuses its own permission-skipping switch under root) unless IS_SANDBOX=1 says the machine is disposable.
 * Verified live as root: with it set, the default mode still sends a permission request before Bash, so every
 * command still goes through the task's permission policy.
 */
function claudeAcpEnv(model: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  if (model) env.ANTHROPIC_MODEL = model;
  if (process.getuid?.() === 0) env.IS_SANDBOX = '1';
  return env;
}

/** The ACP adapter's executable (@zed-industries/claude-agent-acp, verified 0.23.1). */
export const CLAUDE_ACP_BIN = 'claude-agent-acp';

const CHANNEL_TOOLS = ['get_task', 'report_progress', 'ask_orchestrator', 'submit_report'];

function buildClaude(ctx: BuildContext): SpawnPlan {
  const { task } = ctx;
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  args.push('--permission-mode', task.mode === 'write' ? 'acceptEdits' : 'plan');
  // The report file lives in the task directory, outside a worktree.
  args.push('--add-dir', ctx.taskDir);
  if (ctx.model) args.push('--model', ctx.model);
  if (ctx.tier === 'schema') args.push('--json-schema', JSON.stringify(claudeSchema()));
  const files: SpawnPlan['files'] = [];
  if (ctx.tier === 'channel' && task.channel) {
    const name = task.channel.server_name;
    const configFile = path.join(ctx.taskDir, 'claude-mcp-config.json');
    files.push({
      path: configFile,
      content: JSON.stringify({ mcpServers: { [name]: { type: 'stdio', command: task.channel.command, args: task.channel.args } } }, null, 2),
    });
    args.push('--mcp-config', configFile);
    // Headless, MCP tools are denied unless allowed by name.
    args.push('--allowedTools', CHANNEL_TOOLS.map((tool) => `mcp__${name}__${tool}`).join(','));
  }
  args.push(...ctx.extraArgs);
  return stdinPromptPlan(claudeAdapter.bin, args, ctx, { files });
}

/**
 * The strict report schema as claude 2.1.332 accepts it: its validator refuses the draft 2020-12 `$schema` URI
 * ("no schema with key or ref"), so that key is dropped; the rest is draft-independent.
 */
function claudeSchema(): Record<string, unknown> {
  const { $schema: _draft, ...schema } = strictReportSchema();
  return schema;
}

class ClaudeTranslator implements Translator {
  /** The CLI's own session id (stream.ts NativeSession): what a follow-up resumes. */
  private readonly session = new NativeSession();
  private readonly tools = new ToolPairing();
  private readonly usage = new UsageTotals();
  /** Blocks already shown, keyed by message id + block: repeated lines of one message are merged, not duplicated. */
  private readonly seenBlocks = new Set<string>();
  private finalText: string | undefined;
  private structured: unknown;
  private failure: string | undefined;
  private apiError: string | undefined;

  line(native: string): EventDraft[] {
    const event = parseJsonLine(native);
    if (!event) return [];
    if (str(event.type) === 'system' && str(event.subtype) === 'init') this.session.note(event.session_id);
    switch (str(event.type)) {
      case 'assistant':
        return this.assistant(event);
      case 'user':
        return this.toolResults(obj(event.message));
      case 'system':
        return this.system(event);
      case 'result':
        return this.result(event);
      default:
        return [];
    }
  }

  private assistant(event: Record<string, unknown>): EventDraft[] {
    const message = obj(event.message);
    const messageId = str(message.id) ?? '';
    const synthetic = str(message.model) === '<synthetic>' || typeof event.error === 'string';
    const out: EventDraft[] = [];
    arr(message.content).forEach((raw, index) => {
      const block = obj(raw);
      const type = str(block.type);
      const key = `${messageId}:${type}:${str(block.id) ?? str(block.text) ?? str(block.thinking) ?? index}`;
      if (this.seenBlocks.has(key)) return;
      this.seenBlocks.add(key);
      if (type === 'text') {
        const text = str(block.text) ?? '';
        if (!text.trim()) return;
        if (synthetic) {
          // An API failure dressed as a message ("Invalid API key · …"): it is an error, not the agent speaking.
          this.apiError = text;
          out.push({ type: 'error', message: text, fatal: true });
          return;
        }
        this.finalText = lastNonEmpty(this.finalText, text);
        out.push({ type: 'message', text });
      } else if (type === 'thinking') {
        const text = str(block.thinking) ?? '';
        if (text.trim()) out.push({ type: 'thinking', text });
      } else if (type === 'tool_use') {
        out.push(...this.tools.start(str(block.id) ?? '', str(block.name) ?? 'tool', summarizeInput(block.input)));
      }
    });
    return out;
  }

  private toolResults(message: Record<string, unknown>): EventDraft[] {
    return arr(message.content).flatMap((raw) => {
      const block = obj(raw);
      if (str(block.type) !== 'tool_result') return [];
      return this.tools.end(str(block.tool_use_id) ?? '', block.is_error !== true);
    });
  }

  private system(event: Record<string, unknown>): EventDraft[] {
    if (str(event.subtype) !== 'api_retry') return [];
    const attempt = num(event.attempt);
    const max = num(event.max_retries);
    const status = num(event.error_status);
    const of = attempt !== undefined && max !== undefined ? ` ${attempt}/${max}` : '';
    return [{ type: 'progress', message: `Model API retry${of}${status ? ` after HTTP ${status}` : ''}` }];
  }

  private result(event: Record<string, unknown>): EventDraft[] {
    const usage = obj(event.usage);
    const input = (num(usage.input_tokens) ?? 0) + (num(usage.cache_read_input_tokens) ?? 0) + (num(usage.cache_creation_input_tokens) ?? 0);
    this.usage.set({
      input_tokens: isObject(event.usage) ? input : undefined,
      output_tokens: num(usage.output_tokens),
      cost_usd: num(event.total_cost_usd),
      duration_ms: num(event.duration_ms),
    });
    if (event.structured_output !== undefined && event.structured_output !== null) this.structured = event.structured_output;
    const text = str(event.result);
    if (event.is_error === true) {
      const status = num(event.api_error_status);
      this.failure = text?.trim() || (status ? `model API error (HTTP ${status})` : `claude failed (${str(event.subtype) ?? 'error'})`);
      if (this.failure !== this.apiError) return [{ type: 'error', message: this.failure, fatal: true }];
      return [];
    }
    this.finalText = lastNonEmpty(this.finalText, text);
    return [];
  }

  sessionId(): string | undefined {
    return this.session.get();
  }

  end(exitCode: number | null): TranslationSummary {
    const summary: TranslationSummary = {};
    if (this.finalText !== undefined) summary.finalText = this.finalText;
    if (this.structured !== undefined) summary.structuredOutput = this.structured;
    const usage = this.usage.get();
    if (usage) summary.usage = usage;
    const failure = this.failure ?? this.apiError ?? (exitCode !== null && exitCode !== 0 ? `claude exited with code ${exitCode}` : undefined);
    if (failure) summary.nativeFailure = failure;
    const sessionId = this.session.get();
    if (sessionId) summary.sessionId = sessionId;
    return summary;
  }
}
