import { promptForArgv } from './argv-prompt';
import { DOCUMENT_IDS, type EventDraft } from '../protocol';
import { displayCommand, isObject, lastNonEmpty, parseJsonLine } from './stream';
import type { AgentAdapter, BuildContext, SpawnPlan, Translator } from './types';

/**
 * A `[[agent]]` entry of the configuration (reference §3.6): any program that honours the file contract, described
 * by an argument template. The shape matches the launch spec's `generic_agent` (src/engine/store/launch-spec.ts).
 */
export interface GenericAgentDefinition {
  id: string;
  bin: string;
  args: string[];
  network_args?: string[];
  display_name?: string;
  cwd_mode?: 'process' | 'flag';
  native_read_only?: boolean;
}

export const TEMPLATE_TOKENS = ['prompt', 'workspace', 'taskDir', 'reportPath', 'model'] as const;
export type TemplateToken = (typeof TEMPLATE_TOKENS)[number];
const TOKEN = /\{\{\s*([A-Za-z]+)\s*\}\}/g;

/**
 * Expands one template argument. Returns undefined — the argument is DROPPED — when it names a token that is unknown
 * or has no value (e.g. `--model={{model}}` without a model), so an optional flag disappears whole instead of being
 * passed half-filled.
 */
export function expandArg(template: string, values: Partial<Record<TemplateToken, string>>): string | undefined {
  let missing = false;
  const out = template.replace(TOKEN, (_match, name: string) => {
    const value = (TEMPLATE_TOKENS as readonly string[]).includes(name) ? values[name as TemplateToken] : undefined;
    if (value === undefined || value === '') missing = true;
    return value ?? '';
  });
  return missing ? undefined : out;
}

export function genericAdapter(def: GenericAgentDefinition): AgentAdapter {
  const templates = [...def.args, ...(def.network_args ?? [])];
  return {
    id: def.id,
    displayName: def.display_name ?? def.id,
    bin: def.bin,
    capabilities: {
      nativeReadOnly: def.native_read_only ?? false,
      network: def.network_args?.length ? 'controllable' : 'unknown',
      schemaTier: false,
      channel: false,
      model: templates.some((t) => /\{\{\s*model\s*\}\}/.test(t)),
      reportsUsage: false,
    },
    build: (ctx) => buildGeneric(def, ctx),
    createTranslator: () => eventLineTranslator(),
  };
}

function buildGeneric(def: GenericAgentDefinition, ctx: BuildContext): SpawnPlan {
  const values: Partial<Record<TemplateToken, string>> = {
    prompt: promptForArgv(ctx),
    workspace: ctx.task.workspace,
    taskDir: ctx.taskDir,
    reportPath: ctx.task.report_path,
    ...(ctx.model ? { model: ctx.model } : {}),
  };
  const templates = [...def.args, ...(ctx.task.network ? (def.network_args ?? []) : [])];
  const args: string[] = [];
  let promptArg: number | undefined;
  for (const template of templates) {
    const arg = expandArg(template, values);
    if (arg === undefined) continue;
    if (promptArg === undefined && /\{\{\s*prompt\s*\}\}/.test(template)) promptArg = args.length;
    args.push(arg);
  }
  args.push(...ctx.extraArgs);
  return {
    command: def.bin,
    args,
    cwd: def.cwd_mode === 'flag' ? ctx.taskDir : ctx.task.workspace,
    display: displayCommand(def.bin, args, promptArg === undefined ? {} : { arg: promptArg }),
  };
}

/** Event types an agent may report on stdout; the supervisor alone emits started, question and answer. */
const AGENT_EVENT_TYPES = new Set(['thinking', 'message', 'tool_use', 'file_changed', 'progress', 'error', 'finished']);

/**
 * Template agents have no native stream we know, but they MAY print caesar.event/v1 objects on stdout, one per line
 * (an extension over the reference, where template agents are invisible while they work). Such a line is taken as an
 * event draft: its protocol/seq/at/task_id are ignored and re-stamped by the task's single events writer, so `seq`
 * stays unique and the log keeps exactly one `finished`. Every other line is left to raw.log. The last message is
 * the final text the degraded report tier searches.
 */
export function eventLineTranslator(): Translator {
  let finalText: string | undefined;
  return {
    line(native: string): EventDraft[] {
      const value = parseJsonLine(native);
      if (!value || value.protocol !== DOCUMENT_IDS.event || typeof value.type !== 'string' || !AGENT_EVENT_TYPES.has(value.type)) {
        return [];
      }
      const { protocol: _p, seq: _s, at: _a, task_id: _t, ...draft } = value;
      if (draft.type === 'message' && typeof draft.text === 'string') finalText = lastNonEmpty(finalText, draft.text);
      return isObject(draft) ? [draft as unknown as EventDraft] : [];
    },
    end: () => (finalText ? { finalText } : {}),
  };
}
