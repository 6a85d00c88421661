import { superviseTask as runSupervisor, type SuperviseOptions } from '../run/supervisor';
import type { TaskState } from '../../protocol';
import { offerDelegation } from './delegation-server';

/**
 * Being a task's supervisor: the use case only `caesar supervise` and the lean supervisor entry run. It has its own
 * door, beside the tasks index, so the editor's bundle and the MCP server do not carry the supervisor and its agent
 * transports. Here the supervisor is given the delegation server (a use case of this room: it starts tasks), which
 * a sandboxed agent reaches through its socket.
 */
export function superviseTask(taskDir: string, options: SuperviseOptions = {}): Promise<TaskState> {
  return runSupervisor(taskDir, { offerDelegation, ...options });
}
export { STANDBY_ANSWER_FD, STANDBY_TAKEN, type StandbyAssignment } from '../launch/supervisor-process';
export { waitIdle } from '../launch/warm-server';
// An idle supervisor runs the sandbox's preflight (one bwrap start, cached per process) while it waits, not in a task.
export { sandboxPreflight } from '../sandbox/sandbox';
