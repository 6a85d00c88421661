import * as path from 'node:path';
import type { DelegateInput } from '../../src/engine/delegate';
import type { GenericAgentDef } from '../../src/protocol';
import { startFixture } from '../engine/runtime/helpers';

/** The reliability suite's misbehaving agent (test/reliability/hostile-agent.mjs), as an [[agent]] template. */
export const hostileAgent: GenericAgentDef = { id: 'hostile', bin: process.execPath, args: [path.join(__dirname, 'hostile-agent.mjs')] };

/** Delegates a hostile-agent task through the real supervisor (worktree isolation unless overridden). */
export function startHostile(
  root: string,
  fixture: Record<string, unknown>,
  overrides: Partial<DelegateInput> = {},
  env: NodeJS.ProcessEnv = {},
): Promise<{ id: string; taskDir: string }> {
  return startFixture(root, fixture, { agent: 'hostile', generic_agent: hostileAgent, objective: `hostile ${String(fixture.mode)}`, ...overrides }, env);
}
