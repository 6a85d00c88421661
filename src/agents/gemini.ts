import * as path from 'node:path';
import type { EventDraft } from '../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator } from './types';
import { NativeSession, ToolPairing, UsageTotals, stdinPromptPlan, num, obj, parseJsonLine, str, summarizeInput } from './stream';
import { acpPlan } from './acp-plan';

/**
 * Gemini CLI — `gemini -p --output-format stream-json`.
 *
 * Verified on the real bundle, 0.61.0 (@google/gemini-cli), against the project's fake Gemini streamGenerateContent
 * server inside a loopback-only namespace (../shared/agents/RECIPES.md, test/agents/live/gemini.live.ts):
 * - `-p` is "appended to input on stdin": the brief goes on stdin and `-p` carries one short line (PROMPT_LINE);
 * - `--skip-trust` is needed headless (else exit 55); `--yolo` runs every tool; the default approval mode declares
 *   only read-only tools to the model (write_file and run_shell_command are "not found"): the read-only mode;
 * - `--include-directories` lets it reach the task directory (the report file) from a worktree;
 * - stream lines: init, message{role, content, delta}, tool_use{tool_name, tool_id, parameters} BEFORE the tool runs,
 *   tool_result{tool_id, status success|error, error}, error{severity, message}, result{status, error?, stats{
 *   input_tokens, output_tokens, duration_ms}} — no cost;
 * - on HTTP errors the last line is result{status:"error"} and the EXIT CODE IS THE HTTP STATUS MOD 256 (401→145,
 *   500→244); empty or safety-blocked answers end status "error" with exit code 0: the result line decides.
 * Config that is the user's business ($HOME/.gemini/settings.json auth type, GEMINI_API_KEY,
 * GOOGLE_GEMINI_BASE_URL) comes from the inherited environment.
 * No structured-output flag: no schema tier. The return channel goes into a settings file of the task directory named
 * by GEMINI_CLI_SYSTEM_SETTINGS_PATH (gemini's "system settings" layer, which overrides the user's and the
 * workspace's for this run only; documented by gemini-cli, unverified here on the real binary): the user's own
 * `~/.gemini/settings.json` is never touched. `trust: true` lets the default (read-only) approval mode offer its tools.
 */
export const geminiAdapter: AgentAdapter = {
  id: 'gemini',
  envKeys: ['GEMINI_*', 'GOOGLE_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_CLOUD_LOCATION', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_GEMINI_BASE_URL'],
  displayName: 'Gemini CLI',
  bin: 'gemini',
  versionArgs: ['--version'],
  installHint: 'npm install -g @google/gemini-cli (verified: 0.61.0)',
  capabilities: {
    nativeReadOnly: true,
    network: 'open',
    schemaTier: false,
    channel: true,
    model: true,
    reportsUsage: true,
  },
  build: buildGemini,
  createTranslator: () => new GeminiTranslator(),
  acp: {
    // ../shared/agents/ACP.md: `--acp` (default approval mode: shell and writes are asked), trusted folder by env.
    // Reads of the client are off: a refused read of a new file makes its write_file fail (0.61.0).
    // Unverified with --acp: --include-directories (the report file lies in the task directory).
    plan: (ctx) =>
      acpPlan(geminiAdapter.bin, ['--acp', '--include-directories', ctx.taskDir, ...(ctx.model ? ['-m', ctx.model] : [])], ctx, {
        env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
      }),
    verified: '0.61.0',
    readTextFile: false,
  },
};

export const PROMPT_LINE = 'Carry out the task brief given above.';

/** The task's private gemini settings (the channel's MCP server), in the task directory. */
export const GEMINI_CHANNEL_SETTINGS = 'gemini-settings.json';

/** Exit codes gemini documents for set-up problems, worth a sentence rather than a number. */
const EXIT_HINTS: Record<number, string> = {
  41: 'gemini refused its authentication set-up (exit 41): set security.auth.selectedType in its settings',
  55: 'gemini does not trust this folder (exit 55)',
};

function buildGemini(ctx: BuildContext): SpawnPlan {
  const { task } = ctx;
  const args = ['--output-format', 'stream-json', '--skip-trust'];
  args.push(...(task.mode === 'write' ? ['--yolo'] : ['--approval-mode', 'default']));
  args.push('--include-directories', ctx.taskDir);
  if (ctx.model) args.push('-m', ctx.model);
  const promptArg = args.length + 1;
  args.push('-p', PROMPT_LINE);
  args.push(...ctx.extraArgs);
  if (ctx.tier !== 'channel' || !task.channel) return stdinPromptPlan(geminiAdapter.bin, args, ctx, { promptArg });
  const settingsFile = path.join(ctx.taskDir, GEMINI_CHANNEL_SETTINGS);
  const server = { command: task.channel.command, args: task.channel.args, trust: true };
  return stdinPromptPlan(geminiAdapter.bin, args, ctx, {
    promptArg,
    env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: settingsFile },
    files: [{ path: settingsFile, content: JSON.stringify({ mcpServers: { [task.channel.server_name]: server } }, null, 2) }],
  });
}

class GeminiTranslator implements Translator {
  /** The CLI's own session id (stream.ts NativeSession): what a follow-up resumes. */
  private readonly session = new NativeSession();
  private readonly tools = new ToolPairing();
  private readonly usage = new UsageTotals();
  /** Assistant deltas since the last non-message line: one message event per uninterrupted run of deltas. */
  private pending = '';
  private finalText: string | undefined;
  private failure: string | undefined;
  private lastError: string | undefined;

  line(native: string): EventDraft[] {
    const event = parseJsonLine(native);
    if (!event) return [];
    if (str(event.type) === 'init') this.session.note(event.session_id);
    const type = str(event.type);
    if (type === 'message') {
      if (str(event.role) !== 'assistant') return [];
      const content = str(event.content) ?? '';
      if (event.delta === true) {
        this.pending += content;
        return [];
      }
      return [...this.flush(), ...this.message(content)];
    }
    const out = this.flush();
    switch (type) {
      case 'tool_use':
        out.push(...this.tools.start(str(event.tool_id) ?? '', str(event.tool_name) ?? 'tool', summarizeInput(event.parameters)));
        break;
      case 'tool_result':
        out.push(...this.tools.end(str(event.tool_id) ?? '', str(event.status) === 'success'));
        break;
      case 'error': {
        const message = str(event.message) ?? 'gemini reported an error';
        this.lastError = message;
        out.push({ type: 'error', message, fatal: false });
        break;
      }
      case 'result':
        out.push(...this.result(event));
        break;
      default:
        break;
    }
    return out;
  }

  private flush(): EventDraft[] {
    const text = this.pending;
    this.pending = '';
    return this.message(text);
  }

  private message(text: string): EventDraft[] {
    if (!text.trim()) return [];
    this.finalText = text;
    return [{ type: 'message', text }];
  }

  private result(event: Record<string, unknown>): EventDraft[] {
    const stats = obj(event.stats);
    this.usage.set({ input_tokens: num(stats.input_tokens), output_tokens: num(stats.output_tokens), duration_ms: num(stats.duration_ms) });
    if (str(event.status) !== 'error') return [];
    const declared = str(obj(event.error).message);
    this.failure = declared ?? this.lastError ?? 'gemini ended with status "error"';
    return declared && declared !== this.lastError ? [{ type: 'error', message: declared, fatal: true }] : [];
  }

  sessionId(): string | undefined {
    return this.session.get();
  }

  end(exitCode: number | null): TranslationSummary {
    const summary: TranslationSummary = {};
    const tail = this.pending.trim() ? this.pending : undefined;
    const finalText = tail ?? this.finalText;
    if (finalText !== undefined) summary.finalText = finalText;
    const usage = this.usage.get();
    if (usage) summary.usage = usage;
    const failure = this.failure ?? (exitCode !== null && exitCode !== 0 ? exitMeaning(exitCode) : undefined);
    if (failure) summary.nativeFailure = failure;
    const sessionId = this.session.get();
    if (sessionId) summary.sessionId = sessionId;
    return summary;
  }
}

/** gemini exits with the HTTP status mod 256 on API errors (401→145, 500→244). */
export function exitMeaning(exitCode: number): string {
  const hint = EXIT_HINTS[exitCode];
  if (hint) return hint;
  const http = exitCode + 256;
  if (http >= 400 && http <= 599) return `gemini exited with code ${exitCode} (the model API answered HTTP ${http})`;
  return `gemini exited with code ${exitCode}`;
}
