import type { EventDraft, Usage } from '../../protocol';
import type { TranslationSummary, Translator } from '../../agents/types';
import {
  NativeSession, ToolPairing, UsageTotals, arr, clip, isObject, lastNonEmpty, num, obj, parseJsonLine, str, summarizeInput, textDraft,
  workspaceChangePath, type Json,
} from '../../agents/stream';

/**
 * The agent's side of an ACP conversation (every JSON-RPC line it writes on stdout) → caesar.event/v1 drafts.
 *
 * - `session/update`: message and thought chunks are merged into one message/thinking event per uninterrupted run
 *   (a run ends at any other update, a new messageId, or the end of the turn); `tool_call` → tool_use `started` with
 *   the agent's toolCallId as id, its kind as the tool and its title/command and locations as the summary;
 *   `tool_call_update` completed/failed → the end; `plan` → progress with its entries; `usage_update` → the cost.
 * - `session/request_permission`: its toolCall is an announcement too (gemini and codex send no `tool_call` first).
 * - the `session/prompt` response (the only result with a `stopReason`): the turn's end, its usage and outcome.
 * A `tool_call` still `pending` is held until something more is said about it (claude's first says only
 * "Terminal", opencode's only "bash"), so the `started` event carries the real command. Unknown updates produce
 * nothing (they stay in raw.log); nothing here throws on a malformed line.
 */
export class AcpTranslator implements Translator {
  private readonly session = new NativeSession();
  private readonly tools = new ToolPairing();
  private readonly usage = new UsageTotals();
  /** Everything learned about each tool call, by id. */
  private readonly calls = new Map<string, Json>();
  /** `pending` calls whose `started` is held back until more is known. */
  private readonly held = new Set<string>();
  /** Calls whose permission was rejected: closed as failed at the turn's end if the agent never closes them (gemini). */
  private readonly rejected = new Set<string>();
  /** Workspace paths the client wrote for the agent (already a file_changed event): a completed diff does not repeat them. */
  private readonly written = new Set<string>();
  private text: { type: 'message' | 'thinking'; parts: string[]; messageId?: string } | undefined;
  private finalText: string | undefined;
  private stopReason: string | undefined;
  private failure: string | undefined;

  constructor(private readonly workspace?: string) {}

  line(native: string): EventDraft[] {
    const message = parseJsonLine(native);
    if (!message) return [];
    if (str(message.method) === 'session/update') return this.update(obj(obj(message.params).update));
    if (str(message.method) === 'session/request_permission') return this.announce(obj(obj(message.params).toolCall));
    const result = message.result;
    if (isObject(result) && typeof result.stopReason === 'string') return this.turnEnded(result);
    return [];
  }

  /** The client answered a permission request with a reject: the call will not run. */
  noteRejected(toolCallId: string): void {
    if (toolCallId) this.rejected.add(toolCallId);
  }

  /** The client wrote this workspace-relative path for the agent (fs/write_text_file) and said so. */
  noteWritten(rel: string): void {
    this.written.add(rel);
  }

  /** A failure the conversation itself met (session/new refused, the agent gone mid-turn), for the outcome. */
  noteFailure(message: string): void {
    this.failure ??= message;
  }

  /** The ACP session the agent opened (`session/new`'s sessionId): what `session/load` resumes. */
  noteSession(sessionId: unknown): void {
    this.session.note(sessionId);
  }

  sessionId(): string | undefined {
    return this.session.get();
  }

  get stopped(): string | undefined {
    return this.stopReason;
  }

  end(): TranslationSummary {
    const failure = this.failure ?? (this.stopReason ? stopReasonFailure(this.stopReason) : undefined);
    const usage = this.usage.get();
    return {
      ...(this.finalText ? { finalText: this.finalText } : {}),
      ...(usage ? { usage } : {}),
      ...(failure ? { nativeFailure: failure } : {}),
      ...(this.session.get() ? { sessionId: this.session.get() } : {}),
    };
  }

  private update(update: Json): EventDraft[] {
    const kind = str(update.sessionUpdate);
    if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
      return this.chunk(kind === 'agent_message_chunk' ? 'message' : 'thinking', update);
    }
    // Usage and metadata updates do not interrupt a message being streamed; everything else that shows does.
    if (kind === 'usage_update') return this.usageUpdate(update);
    if (kind !== 'tool_call' && kind !== 'tool_call_update' && kind !== 'plan') return [];
    const out = this.flushText();
    if (kind === 'plan') out.push(planProgress(update));
    else if (kind === 'tool_call') out.push(...this.toolCall(update));
    else out.push(...this.toolCallUpdate(update));
    return out;
  }

  private chunk(type: 'message' | 'thinking', update: Json): EventDraft[] {
    const content = obj(update.content);
    const text = str(content.type) === 'text' ? (str(content.text) ?? '') : '';
    const messageId = str(update.messageId);
    const out: EventDraft[] = [];
    if (this.text && (this.text.type !== type || (messageId && this.text.messageId && messageId !== this.text.messageId))) {
      out.push(...this.flushText());
    }
    this.text ??= { type, parts: [], ...(messageId ? { messageId } : {}) };
    this.text.parts.push(text);
    return out;
  }

  private flushText(): EventDraft[] {
    const run = this.text;
    this.text = undefined;
    if (!run) return [];
    const text = run.parts.join('');
    if (run.type === 'message') this.finalText = lastNonEmpty(this.finalText, text);
    return textDraft(run.type, text);
  }

  private toolCall(update: Json): EventDraft[] {
    const id = str(update.toolCallId) ?? '';
    if (!id) return [];
    this.merge(id, update);
    if (str(update.status) === 'pending' && !this.tools.isOpen(id)) {
      this.held.add(id);
      return [];
    }
    return [...this.start(id), ...this.maybeEnd(id, update)];
  }

  private toolCallUpdate(update: Json): EventDraft[] {
    const id = str(update.toolCallId) ?? '';
    if (!id) return [];
    this.merge(id, update);
    const out = this.held.has(id) ? this.start(id) : [];
    return [...out, ...this.maybeEnd(id, update)];
  }

  /** A permission request's toolCall: the call is about to run (or be refused), so it shows now. */
  private announce(toolCall: Json): EventDraft[] {
    const id = str(toolCall.toolCallId) ?? '';
    if (!id) return [];
    const out = this.flushText();
    // The request's own fields are as fresh as any: merged, but a known call keeps what it already had.
    this.merge(id, { ...toolCall, ...this.calls.get(id) });
    if (this.tools.isOpen(id) || (this.calls.get(id)?.closed === true)) return out;
    return [...out, ...this.start(id)];
  }

  private merge(id: string, update: Json): void {
    const known = this.calls.get(id) ?? {};
    const next: Json = { ...known };
    for (const [key, value] of Object.entries(update)) {
      if (value === undefined || value === null) continue;
      if (key === 'rawInput' && isObject(value) && Object.keys(value).length === 0) continue;
      if ((key === 'locations' || key === 'content') && Array.isArray(value) && value.length === 0) continue;
      next[key] = value;
    }
    this.calls.set(id, next);
  }

  private start(id: string): EventDraft[] {
    this.held.delete(id);
    const call = this.calls.get(id) ?? {};
    return this.tools.start(id, str(call.kind) ?? 'tool', this.summary(call));
  }

  private maybeEnd(id: string, update: Json): EventDraft[] {
    const status = str(update.status);
    if (status !== 'completed' && status !== 'failed') return [];
    const call = this.calls.get(id) ?? {};
    call.closed = true;
    this.rejected.delete(id);
    const out = this.tools.end(id, status === 'completed', { tool: str(call.kind) ?? 'tool', summary: this.summary(call) });
    if (status === 'completed') out.push(...this.fileChanges(call));
    return out;
  }

  /** What the call does, for people: the shell command when there is one, else the title, plus the paths it touches. */
  private summary(call: Json): string {
    const input = obj(call.rawInput);
    const base = str(input.command) ?? str(call.title) ?? summarizeInput(call.rawInput);
    const paths = this.paths(call).filter((p) => !base.includes(p) && !base.includes(p.split('/').pop() ?? p));
    return clip(paths.length ? `${base} (${paths.join(', ')})` : base);
  }

  private paths(call: Json): string[] {
    const out: string[] = [];
    for (const location of arr(call.locations)) {
      const file = str(obj(location).path);
      const shown = file ? workspaceChangePath(file, this.workspace) : undefined;
      if (shown && shown !== '' && !out.includes(shown)) out.push(shown);
    }
    return out;
  }

  /** An edit seen finished with its diff: the files it created or modified, as they happen. */
  private fileChanges(call: Json): EventDraft[] {
    if (str(call.kind) !== 'edit' && str(call.kind) !== 'delete') return [];
    const out: EventDraft[] = [];
    for (const block of arr(call.content)) {
      const diff = obj(block);
      if (str(diff.type) !== 'diff' || !str(diff.path)) continue;
      const rel = workspaceChangePath(str(diff.path)!, this.workspace);
      if (!rel || this.written.delete(rel)) continue;
      const action = str(call.kind) === 'delete' ? 'deleted' : diff.oldText === null || diff.oldText === undefined || diff.oldText === '' ? 'created' : 'modified';
      out.push({ type: 'file_changed', path: rel, action });
    }
    return out;
  }

  private usageUpdate(update: Json): EventDraft[] {
    const cost = obj(update.cost);
    const amount = num(cost.amount);
    if (amount !== undefined && (str(cost.currency) ?? 'USD').toUpperCase() === 'USD') this.usage.set({ cost_usd: amount });
    return [];
  }

  private turnEnded(result: Json): EventDraft[] {
    this.stopReason = str(result.stopReason);
    this.usage.set(promptUsage(result));
    const out = this.flushText();
    for (const id of this.held) out.push(...this.start(id));
    for (const id of this.rejected) {
      if (this.tools.isOpen(id)) out.push(...this.tools.end(id, false));
    }
    this.rejected.clear();
    return out;
  }
}

/** Tokens from the prompt response: ACP's `usage` (claude, copilot, opencode) or gemini's `_meta.quota.token_count`. */
function promptUsage(result: Json): Usage {
  const usage = obj(result.usage);
  const quota = obj(obj(obj(result._meta).quota).token_count);
  const input = num(usage.inputTokens) ?? num(quota.input_tokens);
  const output = num(usage.outputTokens) ?? num(quota.output_tokens);
  return { ...(input !== undefined ? { input_tokens: input } : {}), ...(output !== undefined ? { output_tokens: output } : {}) };
}

const PLAN_MARKS: Record<string, string> = { completed: '[x]', in_progress: '[~]', pending: '[ ]' };

/** The agent's plan as one progress event: its entries with their state, and the share done as the percentage. */
function planProgress(update: Json): EventDraft {
  const entries = arr(update.entries).map(obj);
  const lines = entries.map((entry) => `${PLAN_MARKS[str(entry.status) ?? ''] ?? '[ ]'} ${str(entry.content) ?? ''}`.trim());
  const done = entries.filter((entry) => str(entry.status) === 'completed').length;
  const message = lines.length ? `Plan:\n${lines.join('\n')}` : 'Plan: (empty)';
  return { type: 'progress', message, ...(entries.length ? { pct: Math.round((done / entries.length) * 100) } : {}) };
}

/** The stop reasons that are not "the agent finished its turn" (ACP StopReason). */
export function stopReasonFailure(stopReason: string): string | undefined {
  switch (stopReason) {
    case 'end_turn':
      return undefined;
    case 'cancelled':
      return 'The agent ended its turn as cancelled (stop reason "cancelled").';
    case 'refusal':
      return 'The agent refused to go on (stop reason "refusal").';
    case 'max_tokens':
      return 'The model reached its token limit before the turn ended (stop reason "max_tokens").';
    case 'max_turn_requests':
      return 'The agent reached its limit of model requests for one turn (stop reason "max_turn_requests").';
    default:
      return `The agent's turn ended with an unknown stop reason "${stopReason}".`;
  }
}
