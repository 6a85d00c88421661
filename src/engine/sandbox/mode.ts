import type { Finding } from '../../protocol';

/**
 * `[sandbox] mode`: `auto` confines the agent where bubblewrap runs and otherwise runs it with a high finding;
 * `required` refuses to start a task it cannot confine; `off` never confines. When the configuration does not say,
 * $CAESAR_SANDBOX (same values) of the supervisor's environment decides, then the built-in default. That variable is
 * inherited from whatever started Caesar (an MCP client's `env` block, a committed `.mcp.json`), not the user's own
 * word: a sandbox it turns off is said so, with a high finding, and `[sandbox] mode = "required"` in the user's
 * configuration wins over it.
 */
export const SANDBOX_MODES = ['auto', 'required', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
export const DEFAULT_SANDBOX_MODE: SandboxMode = 'auto';

/** The mode, and what decided it. */
export interface SandboxModeDecision {
  mode: SandboxMode;
  from: 'configuration' | 'environment' | 'default';
}

export function sandboxModeDecision(configured: SandboxMode | undefined, env: NodeJS.ProcessEnv = process.env): SandboxModeDecision {
  if (configured) return { mode: configured, from: 'configuration' };
  const fromEnv = env.CAESAR_SANDBOX;
  if (fromEnv && (SANDBOX_MODES as readonly string[]).includes(fromEnv)) return { mode: fromEnv as SandboxMode, from: 'environment' };
  return { mode: DEFAULT_SANDBOX_MODE, from: 'default' };
}

export function effectiveSandboxMode(configured: SandboxMode | undefined, env: NodeJS.ProcessEnv = process.env): SandboxMode {
  return sandboxModeDecision(configured, env).mode;
}

/** Why a task runs unconfined with the mode `off`: the configuration's words, or the inherited variable's. */
export function offReason(decision: SandboxModeDecision): string {
  return decision.from === 'environment' ? '$CAESAR_SANDBOX=off in the environment Caesar was started with (not your configuration)' : '[sandbox] mode = "off"';
}

/** The findings of a task the mode `off` leaves unconfined: none when the user's configuration said so. */
export function offFindings(decision: SandboxModeDecision): Finding[] {
  if (decision.from !== 'environment') return [];
  return [{
    severity: 'high',
    title: 'Not sandboxed',
    detail: `not sandboxed: ${offReason(decision)}. Whatever started Caesar (an MCP client's configuration, a repository's .mcp.json) set it; the agent could write anywhere its user can. To refuse unsandboxed runs whatever the environment says: [sandbox] mode = "required" in ~/.config/caesar/config.toml.`,
  }];
}
