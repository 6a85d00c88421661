import { ENV, PROTOCOL_VERSION, type TaskPaths } from '../../protocol';
import type { SpawnPlan } from '../../agents/types';
import type { LaunchSpec } from '../../protocol';
import { AGENT_TEST_SWITCHES, droppedFromAgents } from '../../base/test-switches';

/**
 * The `minimal` env policy (issue 13, item 4): what an agent's environment keeps of the caller's. Cloud keys, tokens
 * and the editor's IPC handles stay behind unless the agent documents them as its own or `[policy] env_allow` names
 * them. Only names are ever recorded (launch.json); values never leave the process environment.
 */

/** What any program needs to run: where programs are, who and where the user is, the terminal, locale and time. */
export const MINIMAL_ENV_BASE: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'TERM',
  'COLORTERM',
  'NO_COLOR',
  'LANG',
  'LANGUAGE',
  'LC_*',
  'TMPDIR',
  'TZ',
  // Certificates an agent needs to reach its service behind a corporate proxy (paths, not secrets).
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  // Windows: the equivalents of the above.
  'SYSTEMROOT',
  'SystemRoot',
  'COMSPEC',
  'PATHEXT',
  'USERPROFILE',
  'APPDATA',
  'LOCALAPPDATA',
  'TEMP',
  'TMP',
];

/**
 * caesar's own variables an agent may need: the protocol's (set by the supervisor anyway) and the settings a nested
 * `caesar` or the channel server reads. Not every `CAESAR_*` name: the prefix is no promise of harmlessness.
 */
export const CAESAR_OWN_ENV: readonly string[] = [
  'CAESAR_TASK_DIR',
  'CAESAR_TASK_FILE',
  'CAESAR_REPORT_PATH',
  'CAESAR_EVENTS_PATH',
  'CAESAR_TASK_ID',
  'CAESAR_AGENT',
  'CAESAR_DEPTH',
  'CAESAR_PROTOCOL_VERSION',
  'CAESAR_VERSION',
  'CAESAR_KILL_GRACE_MS',
  'CAESAR_CHANNEL_ANSWER_WAIT_MS',
  'CAESAR_COMPILE_CACHE',
  // In a test build, where a test's scripts are (its agent runs `node "$CAESAR_CLI_JS"`); none in the published one.
  ...AGENT_TEST_SWITCHES,
];

/** True when `name` is one of `patterns` (exact, or a prefix pattern ending in `*`). */
export function envNameMatches(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => (pattern.endsWith('*') ? name.startsWith(pattern.slice(0, -1)) : name === pattern));
}

/** The part of `source` the `minimal` policy passes on: the base set, caesar's own, `agentKeys` and `allow`. */
export function minimalEnv(source: NodeJS.ProcessEnv, agentKeys: readonly string[], allow: readonly string[]): NodeJS.ProcessEnv {
  const patterns = [...MINIMAL_ENV_BASE, ...CAESAR_OWN_ENV, ...agentKeys, ...allow];
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && envNameMatches(name, patterns)) env[name] = value;
  }
  return env;
}

/**
 * process.env (all of it under the `inherit` env policy; under `minimal` the base set, caesar's own variables, the
 * adapter's documented keys and the launch's allow list), then the eight CAESAR_* variables, then the adapter's own
 * (reference §1.1.4).
 */
export function agentEnv(plan: SpawnPlan, paths: TaskPaths, id: string, launch: LaunchSpec, envKeys: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = launch.env_policy === 'minimal' ? minimalEnv(process.env, envKeys, launch.env_allow) : { ...process.env };
  // Set for the supervisor so an Electron host can run it; an agent CLI must not inherit it unless it asks.
  delete env.ELECTRON_RUN_AS_NODE;
  // The published build's agents inherit nothing shaped like a test switch (test-switches.production.ts).
  for (const name of Object.keys(env)) if (droppedFromAgents(name)) delete env[name];
  Object.assign(env, {
    [ENV.taskDir]: paths.dir,
    [ENV.taskFile]: paths.task,
    [ENV.reportPath]: paths.report,
    [ENV.eventsPath]: paths.agentEvents,
    [ENV.taskId]: id,
    [ENV.agent]: launch.agent,
    [ENV.depth]: String(launch.depth),
    [ENV.protocolVersion]: PROTOCOL_VERSION,
  });
  return { ...env, ...plan.env };
}
