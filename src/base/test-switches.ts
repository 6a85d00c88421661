/*
 * Environment switches that exist for the tests alone: where Caesar's own scripts are (a test bundles them into a
 * folder of its own), the sandbox's and the network bridge's programs (a test stands in a missing or a fake one), and
 * the apply's crash points. Each of them weakens a protection when something else sets it: a variable is inherited
 * from whatever started Caesar (an MCP client's `env` block, a committed `.mcp.json`), never the user's word, and
 * JavaScript named there runs as the user. The published build (esbuild.mjs --production) bundles
 * test-switches.production.ts instead of this module: none of these names is in it, nothing reads them, and agents
 * inherit nothing shaped like one (agent-env.ts).
 */

const SWITCHES = {
  cliScript: 'CAESAR_CLI_JS',
  supervisorScript: 'CAESAR_SUPERVISOR_JS',
  demoAgentScript: 'CAESAR_DEMO_AGENT_JS',
  hostProxyScript: 'CAESAR_HOST_PROXY_JS',
  bwrap: 'CAESAR_BWRAP',
  socat: 'CAESAR_SOCAT',
  applyCrash: 'CAESAR_TEST_APPLY_CRASH',
} as const;

export type TestSwitch = keyof typeof SWITCHES;

/** The variable's name, in a build that reads it (undefined in the published one). */
export function testSwitchName(name: TestSwitch): string | undefined {
  return SWITCHES[name];
}

/** The switch's value in `env`, in a build that reads it. */
export function testSwitch(name: TestSwitch, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[SWITCHES[name]];
}

/** The test switches an agent passes on, in a test build (a test's agent runs `node "$CAESAR_CLI_JS"`). */
export const AGENT_TEST_SWITCHES: readonly string[] = [SWITCHES.cliScript, SWITCHES.demoAgentScript, SWITCHES.supervisorScript];

/** Whether a variable an agent would inherit is dropped as a test switch: never in a test build. */
export function droppedFromAgents(_name: string): boolean {
  return false;
}
