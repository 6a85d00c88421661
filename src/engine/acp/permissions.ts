import * as path from 'node:path';
import { arr, clip, obj, str, summarizeInput, type Json } from '../../agents/stream';

/**
 * ACP permission requests as caesar questions: which ones are answered without asking (the task's mode and the
 * `permissions` policy), how a request reads as a question, and how a person's answer maps back to one of the
 * agent's options — by KIND (allow_once, allow_always, reject_once, reject_always), never by optionId, whose values
 * differ per agent (../shared/agents/ACP.md).
 */

export type PermissionPolicy = 'ask' | 'allow-in-worktree' | 'deny';
export type OptionKind = 'allow_once' | 'allow_always' | 'reject_once' | 'reject_always';

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
}

export interface PermissionContext {
  policy: PermissionPolicy;
  mode: 'read-only' | 'write';
  /** The task runs in its own worktree (not in the user's checkout). */
  inWorktree: boolean;
  /** The directory the agent works in, absolute. */
  workspace: string;
  /** The return channel's MCP server name: the agent's calls to it are the orchestration itself. */
  channelServer?: string;
  /** The task's report file (outside the workspace): writing it is the orchestration itself too. */
  reportPath?: string;
}

/** An automatic answer and why, or `ask` when a person must decide. */
export type Decision = { kind: 'allow_once' | 'reject_once'; reason: string } | { kind: 'ask' };

/** Tool kinds that change something (ACP ToolKind): never allowed in a read-only task. */
const WRITING_KINDS = new Set(['edit', 'delete', 'move', 'execute']);
/** Tool kinds that only look. */
const READING_KINDS = new Set(['read', 'search', 'think', 'fetch']);
const CHANNEL_TOOLS = ['get_task', 'report_progress', 'ask_orchestrator', 'submit_report'];

export function decide(toolCall: Json, ctx: PermissionContext): Decision {
  const kind = str(toolCall.kind) ?? 'other';
  if (ctx.channelServer && isChannelCall(toolCall, ctx.channelServer)) {
    return { kind: 'allow_once', reason: 'a call to the task\'s own return channel' };
  }
  const files = locations(toolCall);
  if (ctx.reportPath && kind === 'edit' && files.length && files.every((file) => path.resolve(ctx.workspace, file) === path.resolve(ctx.reportPath!))) {
    return { kind: 'allow_once', reason: 'it writes the task\'s report file' };
  }
  if (ctx.policy === 'deny') return { kind: 'reject_once', reason: 'the permissions policy is "deny"' };
  if (ctx.mode === 'read-only' && WRITING_KINDS.has(kind)) {
    return { kind: 'reject_once', reason: `a read-only task never allows a tool of kind "${kind}"` };
  }
  if (ctx.policy === 'allow-in-worktree' && ctx.inWorktree && (ctx.mode === 'write' || READING_KINDS.has(kind))) {
    const outside = files.find((file) => !isInside(file, ctx.workspace));
    if (!outside) return { kind: 'allow_once', reason: 'the task runs in its own worktree (policy "allow-in-worktree")' };
  }
  return { kind: 'ask' };
}

function isChannelCall(toolCall: Json, server: string): boolean {
  const names = [str(toolCall.title), str(obj(obj(toolCall._meta).claudeCode).toolName)].filter((n): n is string => Boolean(n));
  return names.some((name) => CHANNEL_TOOLS.some((tool) => name === `mcp__${server}__${tool}` || name === `${server}__${tool}` || name === `${server}.${tool}`));
}

function locations(toolCall: Json): string[] {
  return arr(toolCall.locations).map((l) => str(obj(l).path)).filter((p): p is string => Boolean(p));
}

export function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, path.resolve(dir, file));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The order the options are offered in: one-time choices before lasting ones, so the first button never allows for good. */
const KIND_ORDER = ['allow_once', 'reject_once', 'allow_always', 'reject_always'];

/** The agent's options in the order they are put to the user (an unknown kind last; otherwise the agent's order). */
export function offeredOrder(options: PermissionOption[]): PermissionOption[] {
  const rank = (o: PermissionOption) => (KIND_ORDER.includes(o.kind) ? KIND_ORDER.indexOf(o.kind) : KIND_ORDER.length);
  return options.map((option, index) => ({ option, index })).sort((a, b) => rank(a.option) - rank(b.option) || a.index - b.index).map((x) => x.option);
}

/** The agent's options as the question's answer choices: "<name> (<kind>)". */
export function optionLabel(option: PermissionOption): string {
  return `${option.name} (${option.kind})`;
}

const VERBS: Record<string, string> = {
  execute: 'run a command',
  edit: 'edit',
  delete: 'delete',
  move: 'move',
  read: 'read',
  search: 'search',
  fetch: 'fetch',
  think: 'think',
};

/** "The agent asks permission to run a command: printf hi > hello.txt". */
export function questionText(toolCall: Json, agentName: string, workspace: string): string {
  const kind = str(toolCall.kind) ?? 'other';
  const input = obj(toolCall.rawInput);
  const what = str(input.command) ?? str(toolCall.title) ?? summarizeInput(toolCall.rawInput);
  const files = locations(toolCall).map((file) => (isInside(file, workspace) ? path.relative(workspace, file) || '.' : file));
  const where = files.length && !files.some((f) => what.includes(f)) ? ` (${files.join(', ')})` : '';
  return clip(`${agentName} asks permission to ${VERBS[kind] ?? 'use a tool'}: ${what || 'an unnamed tool'}${where}`, 500);
}

const WORDS: Array<[RegExp, OptionKind]> = [
  [/\balways\b.*\b(allow|approve|yes)\b|\b(allow|approve)\b.*\balways\b/, 'allow_always'],
  [/\b(never|always)\b.*\b(reject|deny)\b|\b(reject|deny)\b.*\balways\b/, 'reject_always'],
  [/\b(reject|deny|denied|refuse|never|no|n|abort|cancel|stop)\b/, 'reject_once'],
  [/\b(allow|approve|approved|yes|y|ok|proceed|accept)\b/, 'allow_once'],
];

/**
 * The option a free-text answer picks: the exact label, else a kind named in it ("allow once", "reject_once"), else
 * an option's name, else plain words (yes/allow → allow once, no/deny → reject once). Whatever cannot be understood is
 * a reject: an unclear answer never lets a tool run.
 */
export function optionForAnswer(answer: string, options: PermissionOption[]): { option?: PermissionOption; understood: boolean } {
  const text = answer.trim();
  const exact = options.find((o) => optionLabel(o) === text) ?? options.find((o) => o.optionId === text);
  if (exact) return { option: exact, understood: true };
  const normalized = text.toLowerCase().replace(/[\s-]+/g, '_');
  const named = (['allow_always', 'allow_once', 'reject_always', 'reject_once'] as const).find((kind) => normalized.includes(kind));
  if (named) return { option: byKind(options, named), understood: true };
  const byName = options.find((o) => o.name.trim().toLowerCase() === text.toLowerCase());
  if (byName) return { option: byName, understood: true };
  const words = text.toLowerCase();
  const word = WORDS.find(([pattern]) => pattern.test(words));
  if (word) return { option: byKind(options, word[1]), understood: true };
  return { option: byKind(options, 'reject_once'), understood: false };
}

/**
 * The option of that kind, or the nearest one the agent offers: an "always" becomes a "once" of the same sense and
 * back; a reject with no reject option offered finds none (the caller answers `cancelled`).
 */
export function byKind(options: PermissionOption[], kind: OptionKind): PermissionOption | undefined {
  const sense = kind.startsWith('allow') ? 'allow' : 'reject';
  return options.find((o) => o.kind === kind) ?? options.find((o) => o.kind.startsWith(sense));
}
