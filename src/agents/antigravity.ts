import { promptForArgv } from './argv-prompt';
import type { EventDraft } from '../protocol';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator } from './types';
import { NativeSession, UsageTotals, displayCommand, lastNonEmpty, num, obj, parseJsonLine, parseJsonObject, str } from './stream';

/**
 * Antigravity — `agy --print --output-format stream-json`.
 *
 * `agy` is not on the npm registry and cannot be installed or run on this project's machines. The command line is
 * built from the CLI's documented flags (as the reference implementation uses them: `--print <prompt> --output-format
 * stream-json --mode plan|accept-edits --print-timeout <Go duration> --add-dir --model --json-schema
 * --dangerously-skip-permissions`) and is UNVERIFIED: the flags, the modes and the prompt on argv (stdin support is
 * not documented) were never run here.
 *
 * The translator is VERIFIED on two real captures of the stream, copied verbatim from the public reference
 * implementation's test fixtures (test/agents/fixtures/antigravity-ok and antigravity-quota; provenance in their .cmd):
 * - every line is `{"event": <kind>, <kind>: {…}}` (not `type`): `init` (cwd, the 56 tool names, permission_mode, the
 *   echoed json_schema), `step_update` and `result`;
 * - `step_update.step_update` = {step_index, state "DONE", step_type, duration_seconds?, text_delta?, usage?}, with
 *   step types `user_input`, `unknown`, `agent_response`, `checkpoint` and `error_message`;
 * - an `agent_response` may carry its text in `text_delta` ("OK\n" in the success run) or nothing at all (the quota
 *   run); an `error_message` step carries NO text, not even an empty field: the reason only comes in the result;
 * - `result.result` = {status "SUCCESS"|"ERROR", response, error?, duration_seconds, num_turns, usage{input_tokens,
 *   output_tokens, thinking_tokens, cache_read_tokens, total_tokens}}: `error` holds the whole explanation
 *   ("Individual quota reached…"), `response` the final text, and `usage` the run's totals (the sum of the steps').
 * Neither capture called a tool, so the tool steps' shape is unknown and no `tool_use` is emitted: a branch guessed
 * from a plausible convention would match nothing real. A top-level `error` event was never observed either; it is
 * read defensively, in the same `event`/payload convention. The channel is not offered (nothing injects a per-task
 * MCP server; reference §8.19).
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
    reportsUsage: true,
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

const SILENT_ERROR_STEP = 'Antigravity reported an error, without giving its text in its stream.';

class AntigravityTranslator implements Translator {
  /** The CLI's own session id (stream.ts NativeSession): what a follow-up resumes. */
  private readonly session = new NativeSession();
  private readonly usage = new UsageTotals();
  /** The text of the `agent_response` step being streamed, and that step's index: a step's deltas make one message. */
  private pending = '';
  private pendingStep: number | undefined;
  private finalText: string | undefined;
  private response: string | undefined;
  private failure: string | undefined;

  line(native: string): EventDraft[] {
    const event = parseJsonLine(native);
    if (!event) return [];
    if (str(event.event) === 'init') this.session.note(event.conversation_id);
    switch (str(event.event)) {
      case 'step_update':
        return this.step(obj(event.step_update));
      case 'result':
        return [...this.flush(), ...this.result(obj(event.result))];
      case 'error':
        return [...this.flush(), ...this.topLevelError(event)];
      default:
        // `init` (tools, permission mode) and anything newer: kept in raw.log only.
        return [];
    }
  }

  private step(step: Record<string, unknown>): EventDraft[] {
    const kind = str(step.step_type);
    const index = num(step.step_index);
    const out = kind === 'agent_response' && index === this.pendingStep ? [] : this.flush();
    if (kind === 'agent_response') {
      const delta = str(step.text_delta);
      if (delta) {
        this.pending += delta;
        this.pendingStep = index;
      }
    } else if (kind === 'error_message') {
      out.push({ type: 'error', message: SILENT_ERROR_STEP, fatal: false });
    }
    // Per-step usage is summed in case the result never comes; the result's totals replace it.
    this.usage.add(tokens(obj(step.usage)));
    return out;
  }

  private flush(): EventDraft[] {
    const text = this.pending;
    this.pending = '';
    this.pendingStep = undefined;
    if (!text.trim()) return [];
    this.finalText = lastNonEmpty(this.finalText, text);
    return [{ type: 'message', text }];
  }

  private result(result: Record<string, unknown>): EventDraft[] {
    const seconds = num(result.duration_seconds);
    this.usage.set({ ...tokens(obj(result.usage)), ...(seconds !== undefined ? { duration_ms: seconds * 1000 } : {}) });
    const response = str(result.response);
    if (response?.trim()) this.response = response;
    const error = str(result.error);
    if (error?.trim()) {
      this.failure = error;
      return [{ type: 'error', message: error, fatal: true }];
    }
    const status = str(result.status);
    if (status !== 'SUCCESS') this.failure = `Antigravity ended with status ${status ?? 'unknown'}`;
    return [];
  }

  private topLevelError(event: Record<string, unknown>): EventDraft[] {
    const given = [event.message, event.error, obj(event.error).message].map(str).find((text) => text?.trim());
    const message = given ?? 'Antigravity reported an error';
    this.failure = message;
    return [{ type: 'error', message, fatal: true }];
  }

  sessionId(): string | undefined {
    return this.session.get();
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
    const sessionId = this.session.get();
    if (sessionId) summary.sessionId = sessionId;
    return summary;
  }
}

/**
 * The token counts of a step's or the result's `usage`. thinking_tokens are not added: the capture's total_tokens is
 * input + output, so they are already counted in output_tokens.
 */
function tokens(usage: Record<string, unknown>): { input_tokens?: number; output_tokens?: number } {
  const counts: { input_tokens?: number; output_tokens?: number } = {};
  const input = num(usage.input_tokens);
  const output = num(usage.output_tokens);
  if (input !== undefined) counts.input_tokens = input;
  if (output !== undefined) counts.output_tokens = output;
  return counts;
}
