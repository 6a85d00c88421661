import { promptForArgv } from './argv-prompt';
import type { EventDraft } from '../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator } from './types';
import { ToolPairing, UsageTotals, displayCommand, lastNonEmpty, num, obj, parseJsonLine, parseJsonObject, str, summarizeInput } from './stream';

/**
 * Antigravity — `agy --print --output-format stream-json`.
 *
 * ENTIRELY UNVERIFIED. `agy` is not on the npm registry and cannot be installed or run on this project's machines.
 * This adapter is built from the CLI's documented flags (as the reference implementation uses them:
 * `--print <prompt> --output-format stream-json --mode plan|accept-edits --print-timeout <Go duration> --add-dir
 * --model --json-schema --dangerously-skip-permissions`), and its translator is tested only with HAND-WRITTEN lines
 * (test/agents/replay/antigravity.test.ts), shaped after the documented events: `step_update` steps
 * (`agent_response` with a `text_delta`, `error_message`, and — assumed — `tool_call`/`tool_result` with an id),
 * `result{status: "SUCCESS"|…, response, error, usage?}` and a top-level `error`.
 * Consequences: the prompt stays on argv (stdin support is not documented), the channel is not offered (nothing
 * injects a per-task MCP server; reference §8.19), and nothing here is proven against a real binary.
 */
export const antigravityAdapter: AgentAdapter = {
  id: 'antigravity',
  envKeys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_CLOUD_PROJECT', 'GOOGLE_APPLICATION_CREDENTIALS', 'ANTIGRAVITY_*'],
  displayName: 'Antigravity',
  bin: 'agy',
  versionArgs: ['--version'],
  installHint: "see Google Antigravity's documentation (the agy CLI is not on the npm registry)",
  capabilities: {
    nativeReadOnly: true,
    network: 'open',
    schemaTier: true,
    channel: false,
    model: true,
    reportsUsage: false,
  },
  build: buildAntigravity,
  createTranslator: () => new AntigravityTranslator(),
};

/** A Go duration for `--print-timeout`: whole seconds rounded up, as hours or minutes when exact (60000 → "1m"). */
export function goDuration(ms: number): string {
  const seconds = Math.max(1, Math.ceil(ms / 1000));
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

function buildAntigravity(ctx: BuildContext): SpawnPlan {
  const { task } = ctx;
  const write = task.mode === 'write';
  const args = ['--print', promptForArgv(ctx), '--output-format', 'stream-json', '--mode', write ? 'accept-edits' : 'plan'];
  args.push('--print-timeout', goDuration(task.deadline_ms), '--add-dir', ctx.taskDir);
  if (ctx.model) args.push('--model', ctx.model);
  if (ctx.tier === 'schema') args.push('--json-schema', ctx.reportSchemaFile);
  if (write) args.push('--dangerously-skip-permissions');
  args.push(...ctx.extraArgs);
  return {
    command: antigravityAdapter.bin,
    args,
    cwd: task.workspace,
    display: displayCommand(antigravityAdapter.bin, args, { arg: 1 }),
  };
}

class AntigravityTranslator implements Translator {
  private readonly tools = new ToolPairing();
  private readonly usage = new UsageTotals();
  private pending = '';
  private finalText: string | undefined;
  private response: string | undefined;
  private failure: string | undefined;

  line(native: string): EventDraft[] {
    const event = parseJsonLine(native);
    if (!event) return [];
    switch (str(event.type)) {
      case 'step_update':
        return this.step(obj(event.step ?? event));
      case 'result':
        return [...this.flush(), ...this.result(event)];
      case 'error': {
        const message = str(event.message) ?? str(obj(event.error).message) ?? 'Antigravity reported an error';
        this.failure = message;
        return [...this.flush(), { type: 'error', message, fatal: true }];
      }
      default:
        return [];
    }
  }

  private step(step: Record<string, unknown>): EventDraft[] {
    const kind = str(step.type) ?? str(step.kind);
    if (kind === 'agent_response') {
      const delta = str(step.text_delta);
      if (delta !== undefined) this.pending += delta;
      return [];
    }
    const out = this.flush();
    if (kind === 'error_message') {
      const message = str(step.message) ?? 'Antigravity reported an error, without giving its text in its stream.';
      out.push({ type: 'error', message, fatal: false });
    } else if (kind === 'tool_call') {
      out.push(...this.tools.start(str(step.id) ?? '', str(step.name) ?? 'tool', summarizeInput(step.input ?? step.args)));
    } else if (kind === 'tool_result') {
      out.push(...this.tools.end(str(step.id) ?? '', step.is_error !== true && str(step.status) !== 'error'));
    }
    return out;
  }

  private flush(): EventDraft[] {
    const text = this.pending;
    this.pending = '';
    if (!text.trim()) return [];
    this.finalText = lastNonEmpty(this.finalText, text);
    return [{ type: 'message', text }];
  }

  private result(event: Record<string, unknown>): EventDraft[] {
    const usage = obj(event.usage);
    this.usage.set({ input_tokens: num(usage.input_tokens), output_tokens: num(usage.output_tokens), duration_ms: num(event.duration_ms) });
    const response = str(event.response);
    if (response?.trim()) this.response = response;
    const error = str(event.error) ?? str(obj(event.error).message);
    if (error?.trim()) {
      this.failure = error;
      return [{ type: 'error', message: error, fatal: true }];
    }
    if (str(event.status) !== 'SUCCESS') this.failure = `Antigravity ended with status ${str(event.status) ?? 'unknown'}`;
    return [];
  }

  end(exitCode: number | null): TranslationSummary {
    const summary: TranslationSummary = {};
    const finalText = this.response ?? (this.pending.trim() ? this.pending : this.finalText);
    if (finalText !== undefined) summary.finalText = finalText;
    const structured = parseJsonObject(finalText);
    if (structured) summary.structuredOutput = structured;
    const usage = this.usage.get();
    if (usage) summary.usage = usage;
    const failure = this.failure ?? (exitCode !== null && exitCode !== 0 ? `agy exited with code ${exitCode}` : undefined);
    if (failure) summary.nativeFailure = failure;
    return summary;
  }
}
