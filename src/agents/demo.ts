import { promises as fs } from 'node:fs';
import type { EventDraft } from '../protocol';
import { locateDistFile } from './dist-path';
import { ToolPairing, clip, displayCommand, stdinPromptPlan, lastNonEmpty, parseJsonLine, relativeToWorkspace, str, num } from './stream';
import type { AgentAdapter, BuildContext, SpawnPlan, TranslationSummary, Translator, TranslatorContext } from './types';

export const DEMO_AGENT_ID = 'demo';
export const DEMO_AGENT_FILE = 'demo-agent.js';

/**
 * The built-in demo agent: a small Node program shipped as dist/demo-agent.js that honours the whole contract without
 * any model (src/agents/demo/demo-agent.ts). It runs with the editor's own runtime (process.execPath plus
 * ELECTRON_RUN_AS_NODE=1), so it works wherever Caesar does, and reads its prompt on stdin — never on argv.
 * Its native stream is a tiny JSON-lines dialect that this adapter translates like any real CLI's.
 */
export const demoAdapter: AgentAdapter = {
  id: DEMO_AGENT_ID,
  displayName: 'Demo agent (built in, no model)',
  envKeys: ['CAESAR_DEMO_DELAY_MS', 'CAESAR_DEMO_ANSWER_TIMEOUT_MS', 'CAESAR_DEMO_ACP_LINGER', 'CAESAR_DEMO_FAULTS'],
  bin: process.execPath,
  capabilities: {
    nativeReadOnly: true,
    network: 'open',
    schemaTier: false,
    channel: false,
    model: false,
    reportsUsage: true,
  },
  build(ctx: BuildContext): SpawnPlan {
    const script = locateDistFile(DEMO_AGENT_FILE, 'demoAgentScript');
    const args = [script, ...ctx.extraArgs];
    return stdinPromptPlan(process.execPath, args, ctx, { env: { ELECTRON_RUN_AS_NODE: '1' } });
  },
  createTranslator: (ctx?: TranslatorContext) => demoTranslator(ctx?.workspace),
  acp: {
    // `--acp`: the same walk spoken over the Agent Client Protocol, asking one permission before its write.
    plan(ctx: BuildContext): SpawnPlan {
      const script = locateDistFile(DEMO_AGENT_FILE, 'demoAgentScript');
      const args = [script, '--acp', ...ctx.extraArgs];
      return { command: process.execPath, args, cwd: ctx.task.workspace, env: { ELECTRON_RUN_AS_NODE: '1' }, display: displayCommand(process.execPath, args) };
    },
    verified: 'built in',
  },
};

/** The demo agent's stdout dialect → caesar.event/v1 drafts. */
export function demoTranslator(workspace?: string): Translator {
  const tools = new ToolPairing();
  let finalText: string | undefined;
  let failure: string | undefined;
  let usage: TranslationSummary['usage'];
  return {
    line(native: string): EventDraft[] {
      const line = parseJsonLine(native);
      if (!line) return [];
      switch (line.kind) {
        case 'say': {
          const text = str(line.text) ?? '';
          finalText = lastNonEmpty(finalText, text);
          return text ? [{ type: 'message', text }] : [];
        }
        case 'think':
          return str(line.text) ? [{ type: 'thinking', text: str(line.text)! }] : [];
        case 'step': {
          const id = str(line.id) ?? '';
          if (line.phase === 'begin') return tools.start(id, str(line.tool) ?? 'tool', clip(str(line.input) ?? ''));
          return tools.end(id, line.ok !== false, { tool: str(line.tool), summary: str(line.input) });
        }
        case 'progress': {
          const pct = num(line.pct);
          return [{ type: 'progress', message: str(line.message) ?? '', ...(pct !== undefined ? { pct: Math.max(0, Math.min(100, pct)) } : {}) }];
        }
        case 'edit': {
          const action = line.action === 'created' || line.action === 'deleted' || line.action === 'renamed' ? line.action : 'modified';
          return [{ type: 'file_changed', path: relativeToWorkspace(str(line.path) ?? '', workspace), action }];
        }
        case 'usage':
          usage = {
            ...(num(line.input_tokens) !== undefined ? { input_tokens: Math.round(num(line.input_tokens)!) } : {}),
            ...(num(line.output_tokens) !== undefined ? { output_tokens: Math.round(num(line.output_tokens)!) } : {}),
            ...(num(line.cost_usd) !== undefined ? { cost_usd: num(line.cost_usd)! } : {}),
          };
          return [];
        case 'done': {
          const status = line.status === 'failed' || line.status === 'partial' || line.status === 'blocked' ? line.status : 'success';
          if (status === 'failed') failure = str(line.summary) ?? 'the demo agent failed';
          return [{ type: 'finished', status, summary: str(line.summary) ?? '' }];
        }
        default:
          return [];
      }
    },
    end: () => ({
      ...(finalText ? { finalText } : {}),
      ...(usage ? { usage } : {}),
      ...(failure ? { nativeFailure: failure } : {}),
    }),
  };
}

/** True when dist/demo-agent.js can be found (doctor, the walkthrough). */
export async function demoAgentAvailable(): Promise<boolean> {
  try {
    await fs.access(locateDistFile(DEMO_AGENT_FILE, 'demoAgentScript'));
    return true;
  } catch {
    return false;
  }
}
