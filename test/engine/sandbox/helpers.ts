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

/** label → `ok` | `refused` | `missing` (could not even try: a command not found), from the agent's probe-results.txt. */
export function probeResults(worktree: string): Map<string, string> {
  const lines = readFileSync(path.join(worktree, 'probe-results.txt'), 'utf8').split('\n').filter(Boolean);
  return new Map(lines.map((line) => [line.slice(0, line.lastIndexOf(' ')), line.slice(line.lastIndexOf(' ') + 1)]));
}

/** label → `exit N: <stderr>` of each probe that failed, from the agent's probe-errors.txt (absent: none failed). */
export function probeErrors(worktree: string): Map<string, string> {
  let text = '';
  try {
    text = readFileSync(path.join(worktree, 'probe-errors.txt'), 'utf8');
  } catch {
    return new Map();
  }
  return new Map(text.split('\n').filter(Boolean).map((line) => [line.slice(0, line.indexOf('::')), line.slice(line.indexOf('::') + 2)]));
}

/**
 * Asserts each probe was refused the way `reasons` says (its stderr and exit), not merely that it failed: a probe
 * that could not even try (its tool missing) is an error of the test, never a refusal.
 */
export function assertRefused(worktree: string, reasons: Map<string, RegExp>): void {
  const results = probeResults(worktree);
  const errors = probeErrors(worktree);
  for (const [label, reason] of reasons) {
    const result = results.get(label);
    if (result === 'missing') throw new Error(`${label}: the probe could not even try (${errors.get(label)}): install what it needs`);
    if (result !== 'refused') throw new Error(`${label}: expected refused, got ${result ?? '(no result)'}`);
    const error = errors.get(label) ?? '';
    if (!reason.test(error)) throw new Error(`${label}: refused, but not by the sandbox: ${error} (expected ${reason})`);
  }
}
