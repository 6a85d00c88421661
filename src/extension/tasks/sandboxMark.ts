import type { TaskState } from '../../protocol';

/**
 * The sandbox mark of a task row (issue 21, item 5): "sandboxed" or "not sandboxed" in its description, and on hover
 * why not and what its network was. Only for tasks whose supervisor recorded it (state.json `sandbox`); a task from
 * before the sandbox, or still pending, has no mark rather than a guess.
 */
export interface SandboxMark {
  word: 'sandboxed' | 'not sandboxed';
  hover: string;
}

export function sandboxMark(state: Pick<TaskState, 'sandbox' | 'network'>): SandboxMark | undefined {
  const sandbox = state.sandbox;
  if (!sandbox) return undefined;
  if (!sandbox.confined) return { word: 'not sandboxed', hover: `not sandboxed: ${sandbox.reason ?? 'no reason recorded'}` };
  const network = state.network ? 'network open' : 'network cut (only its model endpoint)';
  return { word: 'sandboxed', hover: `sandboxed (bubblewrap): it writes only what its task owns; ${network}` };
}

/** The picker's words for what a task started now would get (the preflight's verdict and the mode in force). */
export function sandboxPickerWords(verdict: { confined: boolean; reason?: string }): { word: string; detail: string } {
  return verdict.confined ? { word: 'sandboxed', detail: '' } : { word: 'not sandboxed', detail: `not sandboxed: ${verdict.reason ?? 'unknown'}` };
}
