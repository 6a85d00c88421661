import type * as TestBuild from './test-switches';

/*
 * What the published build bundles in place of test-switches.ts (esbuild.mjs --production): no switch is read, no
 * name of one is in the bundle, and a variable shaped like one (CAESAR_TEST_*, CAESAR_*_JS, the sandbox's programs)
 * is not passed on to agents.
 */

export type TestSwitch = TestBuild.TestSwitch;

export function testSwitchName(_name: TestSwitch): string | undefined {
  return undefined;
}

export function testSwitch(_name: TestSwitch, _env?: NodeJS.ProcessEnv): string | undefined {
  return undefined;
}

export const AGENT_TEST_SWITCHES: readonly string[] = [];

const SHAPED_LIKE_A_SWITCH = /^CAESAR_(?:TEST_\w*|\w+_JS|BWRAP|SOCAT)$/;

export function droppedFromAgents(name: string): boolean {
  return SHAPED_LIKE_A_SWITCH.test(name);
}
