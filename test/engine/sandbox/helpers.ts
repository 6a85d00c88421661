import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { DelegateInput } from '../../../src/engine/launch/delegate';
import { REPO_ROOT } from '../runtime/helpers';

/** A probe of test/fixtures/probe-agent.sh: a label and a shell command run inside the task. */
export type Probe = [label: string, command: string];

/** Delegation fields that run the bash probe agent with these probes. */
export function probeAgent(probes: Probe[]): Partial<DelegateInput> {
  return {
    agent: 'probe',
    generic_agent: { id: 'probe', bin: '/bin/bash', args: [path.join(REPO_ROOT, 'test/fixtures/probe-agent.sh')] },
    objective: 'run the probes',
    context: probes.map(([label, command]) => `${label}::${command}`).join('\n'),
  };
}

/** label → `ok` | `refused`, from the agent's probe-results.txt in its worktree. */
export function probeResults(worktree: string): Map<string, string> {
  const lines = readFileSync(path.join(worktree, 'probe-results.txt'), 'utf8').split('\n').filter(Boolean);
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), line.slice(line.lastIndexOf(' ') + 1)]));
}
