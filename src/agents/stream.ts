import * as path from 'node:path';
import { NATIVE_SESSION_ID, type EventDraft, type Usage } from '../protocol';
import type { BuildContext, SpawnPlan } from './types';

/**
 * Small helpers shared by the native adapters: reading untrusted JSON lines without throwing, summarising tool
 * inputs, pairing tool starts with their ends, and rendering a command line for people.
 */

export type Json = Record<string, unknown>;

/** One native stdout line as an object, or undefined for anything else (blank, text, arrays, broken JSON). */
export function parseJsonLine(line: string): Json | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function obj(value: unknown): Json {
  return isObject(value) ? value : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export const SUMMARY_MAX = 200;

export function clip(text: string, max = SUMMARY_MAX): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const SUMMARY_KEYS = ['command', 'cmd', 'file_path', 'filePath', 'path', 'pattern', 'query', 'url', 'description', 'prompt'];

/** What a person wants to read about a tool call: its command, path or query, else its serialized input. */
export function summarizeInput(input: unknown): string {
  if (typeof input === 'string') return clip(input);
  const fields = obj(input);
  for (const key of SUMMARY_KEYS) {
    const value = fields[key];
    if (typeof value === 'string' && value.trim()) return clip(value);
    if (Array.isArray(value) && value.length && value.every((v) => typeof v === 'string')) return clip(value.join(' '));
  }
  if (input === undefined || input === null) return '';
  try {
    return clip(JSON.stringify(input));
  } catch {
    return '';
  }
}

/** A path as git would print it when it lies inside the workspace; unchanged otherwise (or without a workspace). */
export function relativeToWorkspace(file: string, workspace: string | undefined): string {
  if (!workspace || !path.isAbsolute(file)) return file;
  const rel = path.relative(workspace, file);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) return file;
  return rel.split(path.sep).join('/');
}

/**
 * A file-change path for the live view: relative to the workspace, or undefined when it lies outside it (the report
 * file in the task directory is not a workspace change). Without a workspace, the path is kept as given.
 */
export function workspaceChangePath(file: string, workspace: string | undefined): string | undefined {
  const rel = relativeToWorkspace(file, workspace);
  return workspace && path.isAbsolute(rel) ? undefined : rel;
}

/**
 * The one pairing of tool starts with their ends. An end whose start was never seen gets a synthetic start first, so
 * every consumer can rely on "started, then succeeded/failed, same id". Ends name the tool their start named, even
 * when the native closing line does not (claude, gemini).
 *
 * Translators call start()/end() with their CLI's native ids. The supervisor passes everything a translator or an
 * agent's outbox produced through pair() once more before events.jsonl is written (src/engine/run/supervisor.ts), which
 * is where id-less calls (template agents, OACP outboxes) get a stable synthetic id: an id-less end closes the oldest
 * open id-less call with the same tool and summary, else the same tool, else (an end naming no tool) the oldest one.
 * Readers then only look ids up (src/common/task-view.ts).
 */
export class ToolPairing {
  private readonly open = new Map<string, { tool: string; summary: string }>();
  /** Open calls that came without an id, oldest first, under the synthetic id they were given. */
  private readonly anonymous: Array<{ id: string; tool: string; summary: string }> = [];
  private synthetic = 0;

  start(id: string, tool: string, summary: string, startedAt?: string): EventDraft[] {
    // Without an id nothing could pair it: such a line is not a tool call we understand (pair() gives one first).
    if (!id || this.open.has(id)) return [];
    this.open.set(id, { tool, summary });
    return [toolEvent(tool, id, summary, 'started', startedAt)];
  }

  end(id: string, ok: boolean, fallback: { tool?: string; summary?: string } = {}): EventDraft[] {
    if (!id) return [];
    const known = this.open.get(id);
    const out: EventDraft[] = [];
    const tool = known?.tool || fallback.tool || '';
    const summary = known?.summary || fallback.summary || '';
    if (!known) out.push(toolEvent(tool, id, summary, 'started'));
    this.open.delete(id);
    out.push(toolEvent(tool, id, summary, ok ? 'succeeded' : 'failed'));
    return out;
  }

  isOpen(id: string): boolean {
    return this.open.has(id);
  }

  /** Any draft through the pairing: a tool_use comes out paired and with an id; every other draft unchanged. */
  pair(draft: EventDraft): EventDraft[] {
    if (draft.type !== 'tool_use') return [draft];
    const tool = draft.tool;
    const summary = draft.input_summary ?? '';
    if ((draft.status ?? 'started') === 'started') {
      let id = draft.id ?? '';
      if (!id) {
        id = this.syntheticId();
        this.anonymous.push({ id, tool, summary });
      }
      return this.start(id, tool, summary, draft.started_at);
    }
    const id = draft.id || this.claimAnonymous(tool, summary) || this.syntheticId();
    return this.end(id, draft.status === 'succeeded', { tool, summary });
  }

  private claimAnonymous(tool: string, summary: string): string | undefined {
    let index = tool ? this.anonymous.findIndex((c) => c.tool === tool && c.summary === summary) : -1;
    if (index < 0 && tool) index = this.anonymous.findIndex((c) => c.tool === tool);
    if (index < 0 && !tool) index = 0;
    const claimed = index >= 0 ? this.anonymous.splice(index, 1)[0] : undefined;
    return claimed && this.open.has(claimed.id) ? claimed.id : undefined;
  }

  private syntheticId(): string {
    let id: string;
    do id = `caesar-call-${++this.synthetic}`;
    while (this.open.has(id));
    return id;
  }
}

function toolEvent(tool: string, id: string, summary: string, status: 'started' | 'succeeded' | 'failed', startedAt?: string): EventDraft {
  const event: EventDraft = { type: 'tool_use', tool, id, input_summary: summary, status };
  if (startedAt) event.started_at = startedAt;
  return event;
}

/** Sums usage across turns; fields the stream never gave stay absent rather than becoming 0. */
export class UsageTotals {
  private value: Usage = {};

  add(part: Usage): void {
    for (const key of ['input_tokens', 'output_tokens', 'duration_ms', 'cost_usd'] as const) {
      const v = part[key];
      if (v === undefined || !Number.isFinite(v) || v < 0) continue;
      this.value[key] = (this.value[key] ?? 0) + (key === 'cost_usd' ? v : Math.round(v));
    }
  }

  set(part: Usage): void {
    for (const key of ['input_tokens', 'output_tokens', 'duration_ms', 'cost_usd'] as const) {
      const v = part[key];
      if (v === undefined || !Number.isFinite(v) || v < 0) continue;
      this.value[key] = key === 'cost_usd' ? v : Math.round(v);
    }
  }

  get(): Usage | undefined {
    return Object.keys(this.value).length ? { ...this.value } : undefined;
  }
}

/** Parses a final message that is a JSON object (schema tiers), tolerating a surrounding ```json fence. */
export function parseJsonObject(text: string | undefined): Json | undefined {
  if (!text) return undefined;
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n```\s*$/.exec(text);
  const body = (fenced ? fenced[1]! : text).trim();
  if (!body.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(body);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Marks the argument that carries the prompt so `display` can elide it. */
export const PROMPT_PLACEHOLDER = '<prompt>';

/**
 * A command line as people read it: arguments quoted only when needed, the prompt replaced by a short marker (argv
 * index `arg`), or shown as a redirection from the prompt file when it travels on stdin.
 */
/** A message or thinking draft, or nothing for blank text: agents stream empty blocks that must not show hollow. */
export function textDraft(type: 'message' | 'thinking', text: string): EventDraft[] {
  return text.trim() ? [{ type, text }] : [];
}

/**
 * The plan every stdin-capable adapter builds: argv as given (extra args already last), run in the task's workspace,
 * the brief fed on stdin — never on argv, where it would show in `ps` and hit the argument-size limit (reference
 * §8.11). `promptArg` marks an argv slot displayed as the prompt placeholder.
 */
export function stdinPromptPlan(
  command: string,
  args: string[],
  ctx: BuildContext,
  extra: Pick<SpawnPlan, 'env' | 'files'> & { promptArg?: number } = {},
): SpawnPlan {
  const { promptArg, ...rest } = extra;
  const plan: SpawnPlan = {
    command,
    args,
    cwd: ctx.task.workspace,
    stdin: ctx.prompt,
    display: displayCommand(command, args, { stdinFile: ctx.promptFile, ...(promptArg !== undefined ? { arg: promptArg } : {}) }),
  };
  if (rest.env) plan.env = rest.env;
  if (rest.files?.length) plan.files = rest.files;
  return plan;
}

export function displayCommand(command: string, args: string[], prompt: { arg?: number; stdinFile?: string } = {}): string {
  const shown = args.map((a, i) => (prompt.arg === i ? PROMPT_PLACEHOLDER : quoteArg(a)));
  const tail = prompt.stdinFile ? ['<', quoteArg(prompt.stdinFile)] : [];
  return [quoteArg(command), ...shown, ...tail].join(' ');
}

function quoteArg(arg: string): string {
  if (arg === PROMPT_PLACEHOLDER) return arg;
  if (arg.length > 120) return `'${arg.slice(0, 60).replace(/'/g, "'\\''")}…'`;
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}

/** Keeps the last non-empty message text: the candidate final answer. */
export function lastNonEmpty(current: string | undefined, next: string | undefined): string | undefined {
  return next && next.trim() ? next : current;
}

/**
 * The agent CLI's own session id, as its stream names it (claude's init `session_id`, codex's `thread.started`
 * `thread_id`, …): what a follow-up or a recovery resumes. It comes from the agent's output, so it is taken only when
 * it looks like an id — bounded, no leading dash, no whitespace or shell character — since it may end up on argv.
 * The first one named wins: a later line cannot move the task to another session.
 */
export class NativeSession {
  private id: string | undefined;

  note(candidate: unknown): void {
    if (this.id === undefined && typeof candidate === 'string' && NATIVE_SESSION_ID.test(candidate)) this.id = candidate;
  }

  get(): string | undefined {
    return this.id;
  }
}
