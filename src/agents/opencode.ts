import type { EventDraft } from '../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator, TranslatorContext } from './types';
import { NativeSession, ToolPairing, UsageTotals, clip, stdinPromptPlan, textDraft, lastNonEmpty, num, obj, parseJsonLine, str, summarizeInput, workspaceChangePath } from './stream';
import { acpPlan } from './acp-plan';

/**
 * OpenCode — `opencode run --format json`.
 *
 * Verified on the real binary, opencode 1.18.33 (opencode-ai), against the project's fake OpenAI Chat Completions
 * server inside a loopback-only namespace (../shared/agents/RECIPES.md, test/agents/live/opencode.live.ts):
 * - flags `run --format json --dir -m --auto --thinking` (`opencode run --help`);
 * - the prompt is read from stdin when no message is given on argv, so it stays off argv;
 * - `OPENCODE_CONFIG_CONTENT` (JSON) is merged last into the config (read in the binary's config loader): the MCP
 *   channel goes there instead of a file written into the user's workspace;
 * - stream lines `{type, timestamp, sessionID, part}`: step_start, reasoning (with --thinking), text, tool_use ONLY
 *   ONCE FINISHED (`part.callID`, `state{status completed|error, input, output, title, time{start,end}}`),
 *   step_finish{tokens{input,output,reasoning,cache}, cost}, error{error{name, data{message, statusCode}}};
 *   no start or end of session; exit 0 on success, 1 on an API error;
 * - "ask" permissions are auto-rejected in run mode; `--auto` approves them. There is no OS sandbox and no
 *   read-only mode, so read-only tasks are forced into a worktree by the orchestrator; `--auto` is passed in both
 *   modes because the report file lies outside the worktree (an external_directory "ask").
 * Tools are shown at their end: the started event is emitted then, carrying the real start time in `started_at`.
 * Unverified: the caesar channel through OPENCODE_CONFIG_CONTENT (the variable is read by 1.18.33; MCP was not run
 * through it here); `tool_use` lines with a status other than completed/error (never seen).
 */
export const opencodeAdapter: AgentAdapter = {
  id: 'opencode',
  envKeys: ['OPENCODE_*', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'GEMINI_API_KEY', 'GOOGLE_GENERATIVE_AI_API_KEY', 'OPENROUTER_API_KEY', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME'],
  displayName: 'OpenCode',
  bin: 'opencode',
  versionArgs: ['--version'],
  installHint: 'npm install -g opencode-ai (verified: 1.18.33)',
  capabilities: {
    nativeReadOnly: false,
    network: 'open',
    schemaTier: false,
    channel: true,
    model: true,
    reportsUsage: true,
  },
  build: buildOpencode,
  createTranslator: (ctx) => new OpencodeTranslator(ctx),
  acp: {
    // ../shared/agents/ACP.md: `opencode acp --cwd`; it asks only when its config says "ask" (no flag for it), given
    // here through OPENCODE_CONFIG_CONTENT (merged last; unverified in acp mode, ACP.md used an OPENCODE_CONFIG file).
    plan: (ctx) =>
      acpPlan(opencodeAdapter.bin, ['acp', '--cwd', ctx.task.workspace], ctx, {
        env: { OPENCODE_CONFIG_CONTENT: JSON.stringify({ permission: { bash: 'ask', edit: 'ask' }, ...(ctx.model ? { model: ctx.model } : {}) }) },
      }),
    verified: '1.18.33',
  },
};

function buildOpencode(ctx: BuildContext): SpawnPlan {
  const { task } = ctx;
  const args = ['run', '--format', 'json', '--dir', task.workspace, '--thinking', '--auto'];
  if (ctx.model) args.push('-m', ctx.model);
  args.push(...ctx.extraArgs);
  if (ctx.tier !== 'channel' || !task.channel) return stdinPromptPlan(opencodeAdapter.bin, args, ctx);
  const server = { type: 'local', command: [task.channel.command, ...task.channel.args], enabled: true };
  return stdinPromptPlan(opencodeAdapter.bin, args, ctx, {
    env: { OPENCODE_CONFIG_CONTENT: JSON.stringify({ mcp: { [task.channel.server_name]: server } }) },
  });
}

class OpencodeTranslator implements Translator {
  /** The CLI's own session id (stream.ts NativeSession): what a follow-up resumes. */
  private readonly session = new NativeSession();
  private readonly tools = new ToolPairing();
  private readonly usage = new UsageTotals();
  private finalText: string | undefined;
  private failure: string | undefined;

  constructor(private readonly ctx?: TranslatorContext) {}

  line(native: string): EventDraft[] {
    const event = parseJsonLine(native);
    if (!event) return [];
    this.session.note(event.sessionID);
    const part = obj(event.part);
    switch (str(event.type)) {
      case 'text': {
        const text = str(part.text) ?? '';
        this.finalText = lastNonEmpty(this.finalText, text);
        return textDraft('message', text);
      }
      case 'reasoning': {
        const text = str(part.text) ?? '';
        return textDraft('thinking', text);
      }
      case 'tool_use':
        return this.tool(part);
      case 'step_finish': {
        const tokens = obj(part.tokens);
        this.usage.add({ input_tokens: num(tokens.input), output_tokens: num(tokens.output), cost_usd: num(part.cost) });
        return [];
      }
      case 'error':
        return this.error(obj(event.error));
      default:
        return [];
    }
  }

  private tool(part: Record<string, unknown>): EventDraft[] {
    const state = obj(part.state);
    const id = str(part.callID) ?? str(part.id) ?? '';
    const tool = str(part.tool) ?? 'tool';
    const summary = clip(str(state.title) ?? '') || summarizeInput(state.input);
    const startMs = num(obj(state.time).start);
    const startedAt = startMs !== undefined ? isoTime(startMs) : undefined;
    const out = this.tools.start(id, tool, summary, startedAt);
    const status = str(state.status);
    if (status !== 'completed' && status !== 'error') return out;
    out.push(...this.tools.end(id, status === 'completed'));
    if (status === 'completed') out.push(...this.fileChange(tool, state));
    return out;
  }

  /** write/edit report the file they touched; git stays the source of truth, this is for the live view. */
  private fileChange(tool: string, state: Record<string, unknown>): EventDraft[] {
    if (tool !== 'write' && tool !== 'edit') return [];
    const metadata = obj(state.metadata);
    const file = workspaceChangePath(str(metadata.filepath) ?? str(obj(state.input).filePath) ?? '', this.ctx?.workspace);
    if (!file) return [];
    const action = tool === 'write' && metadata.exists === false ? 'created' : 'modified';
    return [{ type: 'file_changed', path: file, action }];
  }

  private error(error: Record<string, unknown>): EventDraft[] {
    const data = obj(error.data);
    const status = num(data.statusCode);
    const text = str(data.message) ?? str(error.name) ?? 'opencode reported an error';
    const message = status ? `${text} (HTTP ${status})` : text;
    this.failure = message;
    return [{ type: 'error', message, fatal: true }];
  }

  sessionId(): string | undefined {
    return this.session.get();
  }

  end(exitCode: number | null): TranslationSummary {
    const summary: TranslationSummary = {};
    if (this.finalText !== undefined) summary.finalText = this.finalText;
    const usage = this.usage.get();
    if (usage) summary.usage = usage;
    const failure = this.failure ?? (exitCode !== null && exitCode !== 0 ? `opencode exited with code ${exitCode}` : undefined);
    if (failure) summary.nativeFailure = failure;
    const sessionId = this.session.get();
    if (sessionId) summary.sessionId = sessionId;
    return summary;
  }
}

/**
 * An epoch-milliseconds time as the event schema's ISO date-time, or undefined when the line's number is not one a
 * real clock gives (NaN, beyond what a Date holds, or outside years 0–9999, whose ISO form the schema refuses): a
 * corrupt or hostile line loses its start time, never the tool call.
 */
function isoTime(ms: number): string | undefined {
  const date = new Date(ms);
  if (!Number.isFinite(date.getTime())) return undefined;
  const iso = date.toISOString();
  return /^\d{4}-/.test(iso) ? iso : undefined;
}
