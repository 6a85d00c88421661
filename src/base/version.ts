/**
 * This build's version, the package's (a test keeps the two equal). `caesar --version`, the MCP servers and the ACP
 * client announce it, and agents receive it as CAESAR_VERSION (a nested `caesar` then reports its parent's).
 */
export const CAESAR_VERSION = '0.1.0';

/** The version a `caesar` process reports: the one its parent task announced, else its own. */
export function reportedVersion(env: NodeJS.ProcessEnv = process.env): string {
  return env.CAESAR_VERSION ?? CAESAR_VERSION;
}
