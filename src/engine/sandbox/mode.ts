/**
 * `[sandbox] mode`: `auto` confines the agent where bubblewrap runs and otherwise runs it with a high finding;
 * `required` refuses to start a task it cannot confine; `off` never confines. $CAESAR_SANDBOX (same values)
 * overrides the configuration for one process tree (benchmarks, a CI without bwrap).
 */
export const SANDBOX_MODES = ['auto', 'required', 'off'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];
export const DEFAULT_SANDBOX_MODE: SandboxMode = 'auto';

export function effectiveSandboxMode(configured: SandboxMode | undefined, env: NodeJS.ProcessEnv = process.env): SandboxMode {
  const override = env.CAESAR_SANDBOX;
  if (override && (SANDBOX_MODES as readonly string[]).includes(override)) return override as SandboxMode;
  return configured ?? DEFAULT_SANDBOX_MODE;
}
