/**
 * `[sandbox] mode`: `auto` confines the agent where bubblewrap runs and otherwise runs it with a high finding;
 * `required` refuses to start a task it cannot confine; `off` never confines. When the configuration does not say,
 * $CAESAR_SANDBOX (same values) of the supervisor's environment decides, then the built-in default.
 */
export const SANDBOX_MODES = ['auto', 'required', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
export const DEFAULT_SANDBOX_MODE: SandboxMode = 'auto';

export function effectiveSandboxMode(configured: SandboxMode | undefined, env: NodeJS.ProcessEnv = process.env): SandboxMode {
  if (configured) return configured;
  const fromEnv = env.CAESAR_SANDBOX;
  if (fromEnv && (SANDBOX_MODES as readonly string[]).includes(fromEnv)) return fromEnv as SandboxMode;
  return DEFAULT_SANDBOX_MODE;
}
