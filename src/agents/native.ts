import type { AgentAdapter } from './types';
import { codexAdapter } from './codex';
import { claudeAdapter } from './claude';
import { opencodeAdapter } from './opencode';
import { copilotAdapter } from './copilot';
import { geminiAdapter } from './gemini';
import { antigravityAdapter } from './antigravity';

/**
 * The adapters for the agent CLIs caesar knows natively, in catalog order. The registry (registry.ts) adds the
 * template (`[[agent]]`) and demo agents. Each file says what was verified on a real binary and what was not.
 */
export const NATIVE_ADAPTERS: readonly AgentAdapter[] = [
  codexAdapter,
  claudeAdapter,
  opencodeAdapter,
  copilotAdapter,
  geminiAdapter,
  antigravityAdapter,
];

export { codexAdapter, claudeAdapter, opencodeAdapter, copilotAdapter, geminiAdapter, antigravityAdapter };
